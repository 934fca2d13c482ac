/* SPDX-License-Identifier: MIT */
/*
 * The needs: syntax: "root", "module:rdma_rxe", "memlock:64MiB"... parsed
 * into struct rq_need.  The loader checks it (file:line:col on a typo);
 * needs.c evaluates the result on a target.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "core/loader_int.h"

static const char *const need_words[] = {
	"root", "device", "module", "cmd", "link_layer", "memlock", "file", NULL
};


/* Parse "root", "module:rdma_rxe", "memlock:64MiB"...; 0 or -EINVAL with err. */
int rq_need_parse(const char *s, struct rq_need *nd, char *err, size_t errsz)
{
	const char *colon = strchr(s, ':');
	size_t wl = colon ? (size_t)(colon - s) : strlen(s);
	const char *arg = colon ? colon + 1 : NULL;

	memset(nd, 0, sizeof(*nd));
#define WORD(w) (wl == strlen(w) && !strncmp(s, w, wl))
	if (WORD("root") || WORD("device")) {
		if (arg) {
			snprintf(err, errsz, "need \"%.*s\" takes no argument", (int)wl, s);
			return -EINVAL;
		}
		nd->type = WORD("root") ? NEED_ROOT : NEED_DEVICE;
		return 0;
	}
	if (!WORD("module") && !WORD("cmd") && !WORD("link_layer") && !WORD("memlock") &&
	    !WORD("file")) {
		char word[64], hb[300];
		struct hint h = { .word = word };
		snprintf(word, sizeof(word), "%.*s", (int)(wl < 63 ? wl : 63), s);
		for (int i = 0; need_words[i]; i++)
			hint_try(&h, need_words[i]);
		snprintf(err, errsz, "unknown need \"%s\" (expected root, device, module:NAME, "
			 "cmd:NAME, link_layer:IB|Ethernet, memlock:SIZE or file:PATH)%s",
			 s, hint_text(&h, hb, sizeof(hb)));
		return -EINVAL;
	}
	if (!arg || !*arg) {
		snprintf(err, errsz, "need \"%.*s\" takes an argument (%.*s:...)", (int)wl, s,
			 (int)wl, s);
		return -EINVAL;
	}
	if (WORD("module")) {
		if (!name_chars_ok(arg, "_-")) {
			snprintf(err, errsz, "module:%s: not a module name", arg);
			return -EINVAL;
		}
		nd->type = NEED_MODULE;
		nd->arg = xstrdup(arg);
		/* /sys/module spells dashes as underscores */
		for (char *p = nd->arg; *p; p++)
			if (*p == '-')
				*p = '_';
	} else if (WORD("cmd")) {
		if (!name_chars_ok(arg, "_.+-")) {
			snprintf(err, errsz, "cmd:%s: not a command name (no paths, looked up in PATH)",
				 arg);
			return -EINVAL;
		}
		nd->type = NEED_CMD;
		nd->arg = xstrdup(arg);
	} else if (WORD("link_layer")) {
		const char *ll;
		if (!strcasecmp(arg, "IB") || !strcasecmp(arg, "InfiniBand"))
			ll = "InfiniBand";
		else if (!strcasecmp(arg, "Ethernet") || !strcasecmp(arg, "eth") ||
			 !strcasecmp(arg, "RoCE"))
			ll = "Ethernet";
		else {
			snprintf(err, errsz, "link_layer:%s: expected IB, InfiniBand or Ethernet", arg);
			return -EINVAL;
		}
		nd->type = NEED_LINK_LAYER;
		nd->arg = xstrdup(ll);
	} else if (WORD("memlock")) {
		uint64_t sz;
		if (!strcmp(arg, "unlimited")) {
			sz = UINT64_MAX;
		} else if (parse_size(arg, &sz)) {
			snprintf(err, errsz, "memlock:%s: expected a size (64MiB) or unlimited", arg);
			return -EINVAL;
		}
		nd->type = NEED_MEMLOCK;
		nd->arg = xstrdup(arg);
		nd->size = sz;
	} else {
		if (arg[0] != '/') {
			snprintf(err, errsz, "file:%s: expected an absolute path", arg);
			return -EINVAL;
		}
		nd->type = NEED_FILE;
		nd->arg = xstrdup(arg);
	}
#undef WORD
	return 0;
}
