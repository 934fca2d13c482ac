# bash completion for rdmaqual                              -*- shell-script -*-
# SPDX-License-Identifier: MIT
#
# Every list comes from the rdmaqual being completed, so it cannot drift
# from the program: commands, kinds and targets from `rdmaqual help --names`,
# options from `rdmaqual COMMAND --help`, case names from `rdmaqual list`
# (of the paths already on the line, else the shipped suite).

_rdmaqual_paths()
{
	local w
	for w in "${words[@]:2:cword-2}"; do
		[[ $w != -* && -e $w ]] && printf '%s\n' "$w"
	done
}

_rdmaqual()
{
	local cur prev words cword split
	_init_completion -s -n : || return

	local rq=${words[0]} cmd=${words[1]-}
	if ((cword == 1)); then
		COMPREPLY=($(compgen -W "$("$rq" help --names commands 2>/dev/null) --help --version" \
			-- "$cur"))
		return
	fi

	case $prev in
	--target | --require-target)
		if [[ $cur == sysroot:* ]]; then
			local d=${cur#sysroot:}
			COMPREPLY=($(compgen -d -P sysroot: -- "$d"))
			compopt -o nospace
		else
			COMPREPLY=($(compgen -W "$("$rq" help --names targets 2>/dev/null) auto" -- "$cur"))
			[[ ${COMPREPLY-} == *: ]] && compopt -o nospace
		fi
		__ltrim_colon_completions "$cur"
		return
		;;
	-k | --name)
		local IFS=$'\n'
		COMPREPLY=($(compgen -W "$("$rq" list $(_rdmaqual_paths) 2>/dev/null |
			awk '{ print $1 }')" -- "$cur"))
		return
		;;
	--report-dir | --state-dir | --resume | --root | --modules)
		_filedir -d
		return
		;;
	--baseline | --drain-list | --html | --kernel)
		_filedir
		return
		;;
	--vm-topology | --topology)
		COMPREPLY=($(compgen -W "vm1 vm2 vm3 vm4 vm5 vm6 vm7 vm8" -- "$cur"))
		return
		;;
	--accel)
		COMPREPLY=($(compgen -W "kvm tcg auto" -- "$cur"))
		return
		;;
	--launcher)
		COMPREPLY=($(compgen -W "ssh slurm local" -- "$cur"))
		return
		;;
	--pairs)
		COMPREPLY=($(compgen -W "ring all" -- "$cur"))
		return
		;;
	--peer)
		_known_hosts_real -- "$cur"
		return
		;;
	--nodes)
		COMPREPLY=($(compgen -W "slurm" -- "$cur"))
		return
		;;
	--man)
		COMPREPLY=($(compgen -W "1 5" -- "$cur"))
		return
		;;
	--names)
		COMPREPLY=($(compgen -W "commands kinds targets" -- "$cur"))
		return
		;;
	-t | --tag | --timeout-mul | --fanout | -j | --jobs | -n | --repeat | -T | --tolerance | --keep | --before | \
		--after | --port)
		return
		;;
	esac
	$split && return

	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "$("$rq" "$cmd" --help 2>/dev/null |
			grep -oE -- '(^|[ [])--?[A-Za-z][A-Za-z-]*' | tr -d ' [' | sort -u)" -- "$cur"))
		[[ ${COMPREPLY-} == *= ]] && compopt -o nospace
		return
	fi
	case $cmd in
	help)
		((cword == 2)) && COMPREPLY=($(compgen -W "$("$rq" help --names kinds 2>/dev/null) \
			common --markdown --man --names" -- "$cur"))
		;;
	parse)
		if ((cword == 2)); then
			COMPREPLY=($(compgen -W "$("$rq" parse --help 2>/dev/null |
				sed -n 's/^tools: //p')" -- "$cur"))
		else
			_filedir
		fi
		;;
	vm)
		((cword == 2)) && COMPREPLY=($(compgen -W "boot image bench" -- "$cur"))
		;;
	rxe)
		((cword == 2)) && COMPREPLY=($(compgen -W "add del" -- "$cur"))
		;;
	reports)
		((cword == 2)) && COMPREPLY=($(compgen -W "prune" -- "$cur"))
		;;
	baseline)
		((cword == 2)) && COMPREPLY=($(compgen -W "save" -- "$cur")) || _filedir
		;;
	capture | compare)
		_filedir -d
		;;
	run | list | lint | qualify)
		_filedir '@(yaml|yml)'
		;;
	esac
} &&
	complete -F _rdmaqual rdmaqual

# ex: filetype=sh
