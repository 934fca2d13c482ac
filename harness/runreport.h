#ifndef RQ_RUNREPORT_H
#define RQ_RUNREPORT_H
#include "result.h"
#include "sched.h"
struct runrep { char *dir; char *run_id; };
void runrep_init(struct runrep *r, const char *dir, const char *run_id, int argc, char **argv);
void runrep_begin(struct runrep *r, struct rq_results *rs);
void runrep_row(struct runrep *r, const struct rq_result *row);
void runrep_facts(struct runrep *r, struct sched *s);
void runrep_flush(struct runrep *r, struct rq_results *rs);
void runrep_end(struct runrep *r, struct rq_results *rs);
void runrep_release(struct runrep *r);
#endif
