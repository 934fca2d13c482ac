/* SPDX-License-Identifier: MIT */
/*
 * rdmaqual-coll: rdmaqual's own MPI collective benchmark.  One operation
 * over a size sweep, every result checked, figures with nccl-tests'
 * definitions, per-rank times so that a straggler can be named.
 *
 *   mpirun -np 4 --host vm0,vm1,vm2,vm3 rdmaqual-coll -o allreduce -b 8 -e 1M
 *
 * Operations: allreduce, allgather, reduce_scatter, alltoall, bcast,
 * barrier (collectives) and ring, bisection (all ranks at once on point-to-
 * point links: each rank sends to its neighbour, or each rank of one half
 * exchanges with its partner in the other).
 *
 * Sizes are bytes per rank as nccl-tests counts them: the allreduce and
 * bcast buffer, allgather's receive buffer, reduce_scatter's and
 * alltoall's send buffer, what a ring or bisection rank sends.  Elements
 * are 32-bit integers, so a sum is exact and is checked exactly.
 *   algbw = size / time (time: the average over ranks of each rank's
 *   per-iteration time), busbw = algbw x 2(n-1)/n for allreduce,
 *   x (n-1)/n for allgather, reduce_scatter and alltoall, x 1 for bcast,
 *   ring and bisection (one link per rank).
 *
 * Each iteration starts after a barrier, so a rank's time is its own
 * time in the operation: in a blocking collective the ranks that arrive
 * first wait for the last, and the rank that spent least is the one the
 * others waited for.  After the timed iterations one more operation runs
 * on known data and every element of every rank is checked; "#wrong" is
 * their number, and the first wrong element of each rank is printed with
 * its size and rank.
 *
 * Output (read by rdmaqual's parser, `rdmaqual parse rdmaqual-coll`):
 *   # rdmaqual-coll 1 op allreduce nranks 4 type int32 iters 20 warmup 5
 *   # rank 0 host vm0 pid 311
 *   #  size  count  time_avg  time_min  time_max  algbw  busbw  #wrong  min_rank  max_rank
 *   8  2  12.31  11.02  14.10  0.00  0.00  0  2  3
 *   # ranks 8: 12.00 11.02 14.10 12.11
 *   # pairs 8: 0>1 0.01 1>2 0.01 ...        (ring, bisection: GB/s per link)
 *   # wrong 8: rank 2 element 1 got 5 expected 10
 *   # end wrong 0
 *   # counters host vm1 port rxe0/1 unit pkts xmit 318 rcv 301
 *
 * The counters lines prove where the bytes went: one rank on each node
 * (its lowest on that node) reads every RDMA port's counters before the
 * first size and after the last, and prints what they grew by, so that
 * a collective which fell back to TCP shows RDMA ports that carried
 * nothing.  HCAs count data in 4-byte words (counters/port_xmit_data and
 * port_rcv_data, unit words); rxe has no data counters, only packets
 * (hw_counters/sent_pkts and rcvd_pkts, unit pkts).  A node with no RDMA
 * port prints "# counters host H none".
 *
 * Exit status: 0 when every result was right, 3 when any was wrong, 2 for
 * usage errors.  The self-test options --inject-wrong RANK (that rank
 * alters one received element at the largest size before the check) and
 * --inject-delay RANK:US (that rank sleeps US microseconds before each
 * operation, outside its own timer) exist to prove that a wrong result is
 * reported and a straggler named; they change nothing else.
 */
#include <errno.h>
#include <getopt.h>
#include <dirent.h>
#include <sys/resource.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <mpi.h>

enum op { OP_ALLREDUCE, OP_ALLGATHER, OP_REDUCE_SCATTER, OP_ALLTOALL, OP_BCAST, OP_BARRIER,
	  OP_RING, OP_BISECTION };

static const char *const op_names[] = {
	"allreduce", "allgather", "reduce_scatter", "alltoall", "bcast", "barrier",
	"ring", "bisection",
};

struct opts {
	enum op op;
	size_t min_bytes, max_bytes;
	unsigned factor, iters, warmup;
	bool check;
	int wrong_rank;		/* --inject-wrong */
	int delay_rank;		/* --inject-delay */
	long delay_us;
};

static int rank, nranks;

/* Every RDMA port's traffic counters, read by one rank a node. */
#define PORTS_MAX 64
#define COUNTERS_LINE 4096

struct port_count {
	char name[80];		/* dev/port */
	const char *unit;	/* "words" (x4 bytes) or "pkts" */
	unsigned long long xmit, rcv;
};

static bool read_ull(const char *path, unsigned long long *v)
{
	FILE *f = fopen(path, "re");
	bool ok;

	if (!f)
		return false;
	ok = fscanf(f, "%llu", v) == 1;
	fclose(f);
	return ok;
}

/*
 * The data counters where the device has them (the IB PMA's, which
 * ib_core shows under counters/ when the driver answers MADs), else
 * rxe's packet counters under hw_counters/.
 */
static size_t read_ports(struct port_count *pc)
{
	static const char *const kinds[][3] = {
		{ "counters/port_xmit_data", "counters/port_rcv_data", "words" },
		{ "hw_counters/sent_pkts", "hw_counters/rcvd_pkts", "pkts" },
	};
	const char *root = "/sys/class/infiniband";
	DIR *d = opendir(root);
	struct dirent *e;
	size_t n = 0;

	if (!d)
		return 0;
	while ((e = readdir(d)) && n < PORTS_MAX) {
		char path[512];

		if (e->d_name[0] == '.')
			continue;
		for (int port = 1; port <= 8 && n < PORTS_MAX; port++) {
			for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
				struct port_count *c = &pc[n];

				snprintf(path, sizeof(path), "%s/%s/ports/%d/%s", root, e->d_name, port,
					 kinds[k][0]);
				if (!read_ull(path, &c->xmit))
					continue;
				snprintf(path, sizeof(path), "%s/%s/ports/%d/%s", root, e->d_name, port,
					 kinds[k][1]);
				if (!read_ull(path, &c->rcv))
					continue;
				snprintf(c->name, sizeof(c->name), "%.60s/%d", e->d_name, port);
				c->unit = kinds[k][2];
				n++;
				break;
			}
		}
	}
	closedir(d);
	return n;
}

/* This node's busy and softirq seconds from /proc/stat's "cpu" line. */
static bool node_cpu(double *busy, double *softirq)
{
	unsigned long long user, nice, sys, idle, iowait, irq, sirq;
	long hz = sysconf(_SC_CLK_TCK);
	FILE *f = fopen("/proc/stat", "re");
	bool ok;

	if (!f)
		return false;
	ok = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu", &user, &nice, &sys, &idle,
		    &iowait, &irq, &sirq) == 7 && hz > 0;
	fclose(f);
	if (ok) {
		*busy = (double)(user + nice + sys + irq + sirq) / (double)hz;
		*softirq = (double)sirq / (double)hz;
	}
	return ok;
}

static void self_cpu(double *user, double *sys)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	*user = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6;
	*sys = (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

/* What the ports grew by since `before`, as this node's counters lines. */
static void port_lines(const char *host, const struct port_count *before, size_t nb,
		       char *buf, size_t size)
{
	struct port_count now[PORTS_MAX];
	size_t n = read_ports(now), len = 0;

	buf[0] = '\0';
	if (!n)
		snprintf(buf, size, "# counters host %s none\n", host);
	for (size_t i = 0; i < n && len < size; i++) {
		unsigned long long x0 = 0, r0 = 0;

		for (size_t j = 0; j < nb; j++)
			if (!strcmp(before[j].name, now[i].name) && before[j].unit == now[i].unit)
				x0 = before[j].xmit, r0 = before[j].rcv;
		int w = snprintf(buf + len, size - len, "# counters host %s port %s unit %s xmit %llu "
				 "rcv %llu\n", host, now[i].name, now[i].unit, now[i].xmit - x0,
				 now[i].rcv - r0);

		if (w < 0 || (size_t)w >= size - len) {
			buf[len] = '\0';	/* whole lines only */
			break;
		}
		len += (size_t)w;
	}
}

static void die_usage(const char *msg)
{
	if (!rank)
		fprintf(stderr, "rdmaqual-coll: %s\n"
			"usage: rdmaqual-coll -o OP [-b MIN] [-e MAX] [-f FACTOR] [-n ITERS] [-w WARMUP] [-c 0|1]\n"
			"  OP: allreduce allgather reduce_scatter alltoall bcast barrier ring bisection\n"
			"  sizes in bytes, K/M/G suffixes (2^10...); defaults -b 8 -e 1M -f 2 -n 20 -w 5 -c 1\n",
			msg);
	MPI_Finalize();
	exit(2);
}

static size_t parse_size(const char *s)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s)
		die_usage("a size is a number of bytes (K, M, G suffixes)");
	switch (*end) {
	case 'K': case 'k': v <<= 10; end++; break;
	case 'M': case 'm': v <<= 20; end++; break;
	case 'G': case 'g': v <<= 30; end++; break;
	}
	if (*end || v > (1ULL << 32))
		die_usage("a size is a number of bytes up to 4G (K, M, G suffixes)");
	return (size_t)v;
}

static unsigned parse_uint(const char *s, unsigned lo, unsigned hi, const char *what)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || end == s || v < (long)lo || v > (long)hi) {
		char msg[128];

		snprintf(msg, sizeof(msg), "%s must be %u..%u", what, lo, hi);
		die_usage(msg);
	}
	return (unsigned)v;
}

static void parse_opts(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{ "inject-wrong", required_argument, NULL, 'W' },
		{ "inject-delay", required_argument, NULL, 'D' },
		{ NULL, 0, NULL, 0 },
	};
	int c;
	bool have_op = false;

	*o = (struct opts){ .min_bytes = 8, .max_bytes = 1 << 20, .factor = 2, .iters = 20,
			    .warmup = 5, .check = true, .wrong_rank = -1, .delay_rank = -1 };
	while ((c = getopt_long(argc, argv, "o:b:e:f:n:w:c:", lo, NULL)) != -1) {
		switch (c) {
		case 'o':
			for (size_t i = 0; i < sizeof(op_names) / sizeof(op_names[0]); i++)
				if (!strcmp(optarg, op_names[i]) ||
				    (!strcmp(optarg, "reduce-scatter") && i == OP_REDUCE_SCATTER)) {
					o->op = (enum op)i;
					have_op = true;
				}
			if (!have_op)
				die_usage("unknown operation");
			break;
		case 'b': o->min_bytes = parse_size(optarg); break;
		case 'e': o->max_bytes = parse_size(optarg); break;
		case 'f': o->factor = parse_uint(optarg, 2, 1 << 20, "-f"); break;
		case 'n': o->iters = parse_uint(optarg, 1, 1000000, "-n"); break;
		case 'w': o->warmup = parse_uint(optarg, 0, 1000000, "-w"); break;
		case 'c': o->check = parse_uint(optarg, 0, 1, "-c"); break;
		case 'W': o->wrong_rank = (int)parse_uint(optarg, 0, INT_MAX, "--inject-wrong"); break;
		case 'D': {
			char *colon = strchr(optarg, ':');

			if (!colon)
				die_usage("--inject-delay RANK:US");
			*colon = '\0';
			o->delay_rank = (int)parse_uint(optarg, 0, INT_MAX, "--inject-delay's rank");
			o->delay_us = parse_uint(colon + 1, 0, 1000000000, "--inject-delay's US");
			break;
		}
		default:
			die_usage("unknown option");
		}
	}
	if (!have_op)
		die_usage("-o OP is required");
	if (optind < argc)
		die_usage("unexpected argument");
	if (o->min_bytes > o->max_bytes)
		die_usage("-b is larger than -e");
	if (o->op == OP_BISECTION && nranks % 2)
		die_usage("bisection needs an even number of ranks");
	if ((o->op == OP_RING || o->op == OP_BISECTION) && nranks < 2)
		die_usage("ring and bisection need two ranks or more");
}

/* Elements per rank at a size, as nccl-tests rounds them: block ops divide by n. */
static size_t count_for(const struct opts *o, size_t bytes)
{
	size_t c = bytes / sizeof(int32_t);

	if (o->op == OP_ALLGATHER || o->op == OP_REDUCE_SCATTER || o->op == OP_ALLTOALL)
		c = c / (size_t)nranks * (size_t)nranks;
	return o->op == OP_BARRIER ? 0 : c;
}

static double bus_factor(enum op op)
{
	double n = nranks;

	switch (op) {
	case OP_ALLREDUCE: return 2 * (n - 1) / n;
	case OP_ALLGATHER: case OP_REDUCE_SCATTER: case OP_ALLTOALL: return (n - 1) / n;
	default: return 1;
	}
}

static int ring_peer(int dir)
{
	return (rank + dir + nranks) % nranks;
}

static int bisection_peer(void)
{
	int half = nranks / 2;

	return rank < half ? rank + half : rank - half;
}

static int32_t *sbuf, *rbuf;

/* Fill the send buffer with what this rank contributes (see check()). */
static void fill(const struct opts *o, size_t count)
{
	size_t blk = nranks ? count / (size_t)nranks : 0;

	for (size_t i = 0; i < count; i++) {
		switch (o->op) {
		case OP_ALLREDUCE:
			sbuf[i] = (rank + 1) * (int32_t)(i % 7 + 1);
			break;
		case OP_ALLGATHER:
			sbuf[i] = rank * 131 + (int32_t)(i % 97);
			break;
		case OP_REDUCE_SCATTER:
			sbuf[i] = (rank + 1) * (int32_t)(i / blk + 1) + (int32_t)(i % blk % 5);
			break;
		case OP_ALLTOALL:
			sbuf[i] = rank * 1000 + (int32_t)(i / blk) * 7 + (int32_t)(i % blk % 11);
			break;
		case OP_BCAST:
			sbuf[i] = rank ? -1 : (int32_t)(i * 2654435761u);
			break;
		default:
			sbuf[i] = rank * 977 + (int32_t)(i % 13);
			break;
		}
	}
	memset(rbuf, 0xa5, count * sizeof(*rbuf));
}

static void run_op(const struct opts *o, size_t count)
{
	int n = (int)count;
	MPI_Request rq[2];

	switch (o->op) {
	case OP_ALLREDUCE:
		MPI_Allreduce(sbuf, rbuf, n, MPI_INT32_T, MPI_SUM, MPI_COMM_WORLD);
		break;
	case OP_ALLGATHER:
		MPI_Allgather(sbuf, n / nranks, MPI_INT32_T, rbuf, n / nranks, MPI_INT32_T,
			      MPI_COMM_WORLD);
		break;
	case OP_REDUCE_SCATTER:
		MPI_Reduce_scatter_block(sbuf, rbuf, n / nranks, MPI_INT32_T, MPI_SUM,
					 MPI_COMM_WORLD);
		break;
	case OP_ALLTOALL:
		MPI_Alltoall(sbuf, n / nranks, MPI_INT32_T, rbuf, n / nranks, MPI_INT32_T,
			     MPI_COMM_WORLD);
		break;
	case OP_BCAST:
		/* rank 0's buffer is its send buffer; the others receive into theirs */
		MPI_Bcast(rank ? rbuf : sbuf, n, MPI_INT32_T, 0, MPI_COMM_WORLD);
		break;
	case OP_BARRIER:
		MPI_Barrier(MPI_COMM_WORLD);
		break;
	case OP_RING:
	case OP_BISECTION: {
		int to = o->op == OP_RING ? ring_peer(1) : bisection_peer();
		int from = o->op == OP_RING ? ring_peer(-1) : to;

		MPI_Irecv(rbuf, n, MPI_INT32_T, from, 7, MPI_COMM_WORLD, &rq[0]);
		MPI_Isend(sbuf, n, MPI_INT32_T, to, 7, MPI_COMM_WORLD, &rq[1]);
		MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
		break;
	}
	}
}

struct wrong {
	unsigned long long n;
	size_t elem;
	int32_t got, want;
};

static int32_t expected(const struct opts *o, size_t count, size_t i)
{
	size_t blk = count / (size_t)nranks;
	int32_t n = nranks;

	switch (o->op) {
	case OP_ALLREDUCE:
		return n * (n + 1) / 2 * (int32_t)(i % 7 + 1);
	case OP_ALLGATHER:
		return (int32_t)(i / blk) * 131 + (int32_t)(i % blk % 97);
	case OP_REDUCE_SCATTER:
		/* block `rank` of the sum: sum over q of (q+1)(rank+1) + n (j % 5) */
		return n * (n + 1) / 2 * (rank + 1) + n * (int32_t)(i % 5);
	case OP_ALLTOALL:
		return (int32_t)(i / blk) * 1000 + rank * 7 + (int32_t)(i % blk % 11);
	case OP_BCAST:
		return (int32_t)(i * 2654435761u);
	case OP_RING:
		return ring_peer(-1) * 977 + (int32_t)(i % 13);
	case OP_BISECTION:
		return bisection_peer() * 977 + (int32_t)(i % 13);
	case OP_BARRIER:
		break;
	}
	return 0;
}

/* One more operation on known data; every element this rank received, checked. */
static struct wrong check(const struct opts *o, size_t count, bool last)
{
	struct wrong w = { 0 };
	size_t n = o->op == OP_REDUCE_SCATTER ? count / (size_t)nranks : count;

	fill(o, count);
	run_op(o, count);
	if (last && rank == o->wrong_rank && n)
		rbuf[n / 2] += 1;
	for (size_t i = 0; i < n; i++) {
		int32_t want = expected(o, count, i);

		if (rank == 0 && o->op == OP_BCAST)
			break;	/* the root's buffer was not received */
		if (rbuf[i] != want && !w.n++) {
			w.elem = i;
			w.got = rbuf[i];
			w.want = want;
		}
	}
	return w;
}

static void pause_us(long us)
{
	struct timespec ts = { .tv_sec = us / 1000000, .tv_nsec = us % 1000000 * 1000 };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static double time_op(const struct opts *o, size_t count)
{
	double total = 0;

	for (unsigned i = 0; i < o->warmup; i++)
		run_op(o, count);
	for (unsigned i = 0; i < o->iters; i++) {
		double t0;

		MPI_Barrier(MPI_COMM_WORLD);
		if (rank == o->delay_rank)
			pause_us(o->delay_us);
		t0 = MPI_Wtime();
		run_op(o, count);
		total += MPI_Wtime() - t0;
	}
	return total / o->iters * 1e6;
}

int main(int argc, char **argv)
{
	struct opts o;
	char host[MPI_MAX_PROCESSOR_NAME] = "";
	char *hosts = NULL;
	double *times = NULL;
	struct wrong *wrongs = NULL;
	unsigned long long total_wrong = 0;
	int hlen = 0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nranks);
	parse_opts(argc, argv, &o);
	setvbuf(stdout, NULL, _IOLBF, 0);

	size_t maxc = count_for(&o, o.max_bytes);

	sbuf = malloc((maxc ? maxc : 1) * sizeof(*sbuf));
	rbuf = malloc((maxc ? maxc : 1) * sizeof(*rbuf));
	if (!sbuf || !rbuf) {
		fprintf(stderr, "rdmaqual-coll: rank %d: cannot allocate 2 x %zu bytes\n", rank,
			maxc * sizeof(*sbuf));
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	MPI_Get_processor_name(host, &hlen);
	if (!rank) {
		hosts = calloc((size_t)nranks, MPI_MAX_PROCESSOR_NAME);
		times = calloc((size_t)nranks, sizeof(*times));
		wrongs = calloc((size_t)nranks, sizeof(*wrongs));
	}
	long pid = (long)getpid();
	long *pids = rank ? NULL : calloc((size_t)nranks, sizeof(long));

	MPI_Gather(host, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, hosts, MPI_MAX_PROCESSOR_NAME,
		   MPI_CHAR, 0, MPI_COMM_WORLD);
	MPI_Gather(&pid, 1, MPI_LONG, pids, 1, MPI_LONG, 0, MPI_COMM_WORLD);
	if (!rank) {
		printf("# rdmaqual-coll 1 op %s nranks %d type int32 iters %u warmup %u check %d\n",
		       op_names[o.op], nranks, o.iters, o.warmup, o.check);
		for (int r = 0; r < nranks; r++)
			printf("# rank %d host %s pid %ld\n", r, hosts + (size_t)r * MPI_MAX_PROCESSOR_NAME,
			       pids[r]);
		printf("#       size      count   time_avg   time_min   time_max      algbw      busbw"
		       "   #wrong min_rank max_rank\n");
		printf("#        (B) (elements)       (us)       (us)       (us)     (GB/s)     (GB/s)\n");
	}

	/* one rank a node reads its ports: the lowest on that node */
	MPI_Comm node;
	int node_rank = 0;
	struct port_count before[PORTS_MAX];
	size_t nbefore = 0;

	MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
	MPI_Comm_rank(node, &node_rank);
	double u0 = 0, s0 = 0, busy0 = 0, sirq0 = 0;
	bool have_node_cpu = false;

	MPI_Barrier(MPI_COMM_WORLD);
	if (!node_rank) {
		nbefore = read_ports(before);
		have_node_cpu = node_cpu(&busy0, &sirq0);
	}
	self_cpu(&u0, &s0);

	size_t prev = SIZE_MAX;

	for (size_t bytes = o.op == OP_BARRIER ? 0 : o.min_bytes;; bytes *= o.factor) {
		size_t count = count_for(&o, bytes);
		bool last = o.op == OP_BARRIER || bytes * o.factor > o.max_bytes || !bytes;

		/* a block op's size below one element per rank has nothing to move */
		if ((count || o.op == OP_BARRIER) && (count != prev || o.op == OP_BARRIER)) {
			double t = time_op(&o, count);
			struct wrong w = { 0 };

			prev = count;
			if (o.check && o.op != OP_BARRIER)
				w = check(&o, count, last);
			MPI_Gather(&t, 1, MPI_DOUBLE, times, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
			MPI_Gather(&w, sizeof(w), MPI_BYTE, wrongs, sizeof(w), MPI_BYTE, 0,
				   MPI_COMM_WORLD);
			if (!rank) {
				double sum = 0, mn = times[0], mx = times[0];
				int rmin = 0, rmax = 0;
				unsigned long long nw = 0;
				size_t sz = count * sizeof(int32_t);

				for (int r = 0; r < nranks; r++) {
					sum += times[r];
					if (times[r] < mn)
						mn = times[r], rmin = r;
					if (times[r] > mx)
						mx = times[r], rmax = r;
					nw += wrongs[r].n;
				}
				double avg = sum / nranks;
				double algbw = avg > 0 ? sz / avg / 1e3 : 0;	/* B/us -> GB/s */

				total_wrong += nw;
				printf("%12zu %10zu %10.2f %10.2f %10.2f %10.3f %10.3f %8llu %8d %8d\n",
				       sz, count, avg, mn, mx, algbw, algbw * bus_factor(o.op), nw,
				       rmin, rmax);
				printf("# ranks %zu:", sz);
				for (int r = 0; r < nranks; r++)
					printf(" %.2f", times[r]);
				printf("\n");
				if (o.op == OP_RING || o.op == OP_BISECTION) {
					double agg = 0;

					printf("# pairs %zu:", sz);
					for (int r = 0; r < nranks; r++) {
						int to = o.op == OP_RING ? (r + 1) % nranks
							 : r < nranks / 2 ? r + nranks / 2 : r - nranks / 2;
						double bw = times[r] > 0 ? sz / times[r] / 1e3 : 0;

						agg += bw;
						printf(" %d>%d %.3f", r, to, bw);
					}
					printf("\n# aggregate %zu: %.3f\n", sz, agg);
				}
				for (int r = 0; r < nranks; r++)
					if (wrongs[r].n)
						printf("# wrong %zu: rank %d host %s elements %llu first "
						       "%zu got %" PRId32 " expected %" PRId32 "\n",
						       sz, r, hosts + (size_t)r * MPI_MAX_PROCESSOR_NAME,
						       wrongs[r].n, wrongs[r].elem, wrongs[r].got,
						       wrongs[r].want);
			}
		}
		if (last)
			break;
	}
	if (!rank)
		printf("# end wrong %llu\n", total_wrong);
	double u1, s1, busy1 = 0, sirq1 = 0;

	self_cpu(&u1, &s1);
	MPI_Barrier(MPI_COMM_WORLD);

	char *mine = calloc(1, COUNTERS_LINE), *all = NULL;

	if (!mine)
		MPI_Abort(MPI_COMM_WORLD, 1);
	if (!node_rank)
		port_lines(host, before, nbefore, mine, COUNTERS_LINE - 256);
	size_t ml = strlen(mine);

	/*
	 * Clamped at 0: with VIRT_CPU_ACCOUNTING_GEN (Debian's 6.12) the
	 * kernel's cputime figures may read a little lower than before.
	 */
	ml += (size_t)snprintf(mine + ml, COUNTERS_LINE - ml, "# cpu rank %d host %s user_s %.3f "
			       "sys_s %.3f\n", rank, host, fmax(u1 - u0, 0), fmax(s1 - s0, 0));
	if (have_node_cpu && node_cpu(&busy1, &sirq1))
		snprintf(mine + ml, COUNTERS_LINE - ml, "# node host %s busy_s %.3f softirq_s %.3f\n",
			 host, fmax(busy1 - busy0, 0), fmax(sirq1 - sirq0, 0));
	if (!rank && !(all = calloc((size_t)nranks, COUNTERS_LINE)))
		MPI_Abort(MPI_COMM_WORLD, 1);
	MPI_Gather(mine, COUNTERS_LINE, MPI_CHAR, all, COUNTERS_LINE, MPI_CHAR, 0, MPI_COMM_WORLD);
	for (int r = 0; !rank && r < nranks; r++)
		fputs(all + (size_t)r * COUNTERS_LINE, stdout);
	free(mine);
	free(all);
	MPI_Comm_free(&node);
	MPI_Bcast(&total_wrong, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
	free(sbuf);
	free(rbuf);
	free(hosts);
	free(times);
	free(wrongs);
	free(pids);
	MPI_Finalize();
	return total_wrong ? 3 : 0;
}
