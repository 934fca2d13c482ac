/* SPDX-License-Identifier: MIT */
/*
 * The help line of every option that more than one command takes, written
 * once: run, qualify, list, lint and vm print these, so an option reads the
 * same wherever it is (and a change to it is one edit).
 */
#ifndef RQ_CLI_OPTIONS_H
#define RQ_CLI_OPTIONS_H

#define CLI_HELP_NAME \
"  -k, --name GLOB          cases whose name matches GLOB (repeatable)\n"
#define CLI_HELP_TAG \
"  -t, --tag TAG            cases with TAG (repeatable); !TAG excludes; run leaves\n" \
"                           cases tagged lab-scale out unless -t lab-scale\n"
#define CLI_HELP_TIMEOUT_MUL \
"      --timeout-mul X      scale every deadline, 0.1..100 (default 1; TCG guests\n" \
"                           are slow); a scaled deadline is capped at one week\n"
#define CLI_HELP_REPORT_DIR \
"      --report-dir DIR     write reports under DIR/<run-id>/ (default reports)\n"
#define CLI_HELP_VM_TOPOLOGY \
"      --vm-topology T      vm1, vm2 (default) or vm3..vm8 (N guests on a bridge; root)\n"
#define CLI_HELP_ACCEL \
"      --accel A            kvm, tcg or auto (default auto)\n"
#define CLI_HELP_STATE_DIR \
"      --state-dir DIR      run-state and lock directory\n"

#endif
