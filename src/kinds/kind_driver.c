/* SPDX-License-Identifier: MIT */
/*
 * driver: is the RDMA stack there and sane, on every device and port?
 *
 * What a driver upgrade breaks first: a module that no longer loads, a PCI
 * function left unbound, firmware older than the driver wants, a uverbs
 * device missing (so verbs sees nothing), a rail whose port stayed DOWN.
 * One row per device and port (`devices: all` by default), so a GPU node
 * with one of eight rails down shows exactly that rail.
 *
 * Two profiles (docs/node-checks.md): hca (mlx5: PCI vendor 0x15b3, a
 * known device id mapped to its model, bound to mlx5_core, firmware pinned or
 * minimum, mlx5_core/mlx5_ib/ib_core/ib_uverbs/rdma_ucm live) and rxe (rdma_rxe/
 * ib_core/ib_uverbs live, parent netdev, link layer Ethernet).  Both: uverbs
 * device present, port ACTIVE.  `profile: auto` picks per device; a case that
 * pins a profile SKIPs devices of the other kind, saying why.  Stack versions
 * (kernel, rdma-core, OFED, driver) are recorded as facts on every row.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/kind.h"
#include "parsers/parse_fwmanager.h"
#include "core/proc.h"
#include "rdma/nodeinfo.h"
#include "rdma/pci_ids.h"
#include "rdma/rdmadev.h"
#include "rdma/verbs.h"
#include "core/util.h"

enum { PROFILE_AUTO, PROFILE_HCA, PROFILE_RXE };
static const char *const profile_names[] = { "auto", "hca", "rxe", NULL };

struct driver_cfg {
	int profile;
	struct rq_list modules;
	char *driver;
	struct rq_list models;
	struct rq_list fw_ver;
	struct rq_list min_fw;
	char *parent;
	char *link_layer;
	bool port_active;
	bool allow_vf;
	long long min_devices;
	long long expect_rate;
	char *expect_width;
	char *expect_speed;
	long long expect_netdev_speed;
	bool fw_query;
	bool fw_pending_ok;
};

static const struct key_def driver_keys[] = {
	{ .name = "profile", .type = KEY_ENUM, .choices = profile_names, .def = "auto",
	  .offset = offsetof(struct driver_cfg, profile),
	  .help = "hca (ConnectX/mlx5), rxe (soft-RoCE) or auto (per device); devices of the other kind SKIP" },
	{ .name = "modules", .type = KEY_LIST, .elem = KEY_STR,
	  .offset = offsetof(struct driver_cfg, modules),
	  .help = "kernel modules that must be live (default hca: mlx5_core mlx5_ib ib_core ib_uverbs rdma_ucm; rxe: rdma_rxe ib_core ib_uverbs)" },
	{ .name = "driver", .type = KEY_STR,
	  .offset = offsetof(struct driver_cfg, driver),
	  .help = "kernel driver every selected device must use (mlx5_core, rxe)" },
	{ .name = "models", .type = KEY_LIST, .elem = KEY_STR,
	  .offset = offsetof(struct driver_cfg, models),
	  .help = "accepted HCA models, by name (\"ConnectX-6 Dx\") or PCI device id (0x101d)" },
	{ .name = "fw_ver", .type = KEY_LIST, .elem = KEY_STR,
	  .offset = offsetof(struct driver_cfg, fw_ver),
	  .help = "pinned firmware, one per family (the first number: 16 CX-5, 20 CX-6, 22 CX-6 Dx, 28 CX-7); a device whose family has no entry fails" },
	{ .name = "min_fw", .type = KEY_LIST, .elem = KEY_STR,
	  .offset = offsetof(struct driver_cfg, min_fw),
	  .help = "minimum firmware, one per family (first number); families without an entry are not judged" },
	{ .name = "parent", .type = KEY_STR,
	  .offset = offsetof(struct driver_cfg, parent),
	  .help = "rxe: the netdev the rxe device must sit on (eth0)" },
	{ .name = "link_layer", .type = KEY_STR,
	  .offset = offsetof(struct driver_cfg, link_layer),
	  .help = "link layer every selected port must have (InfiniBand, Ethernet); rxe always Ethernet" },
	{ .name = "port_active", .type = KEY_BOOL, .def = "true",
	  .offset = offsetof(struct driver_cfg, port_active),
	  .help = "every selected port must be ACTIVE" },
	{ .name = "expect_rate", .type = KEY_INT, .def = "0", .min = 0, .max = 100000,
	  .offset = offsetof(struct driver_cfg, expect_rate),
	  .help = "every selected ACTIVE port's rate in Gb/s, as sysfs prints it (400 for 4X NDR; 0: not judged)" },
	{ .name = "expect_width", .type = KEY_STR,
	  .offset = offsetof(struct driver_cfg, expect_width),
	  .help = "every selected ACTIVE port's link width (1X, 2X, 4X, 8X, 12X)" },
	{ .name = "expect_speed", .type = KEY_STR,
	  .offset = offsetof(struct driver_cfg, expect_speed),
	  .help = "every selected ACTIVE port's lane speed name (SDR ... EDR, HDR, NDR, XDR)" },
	{ .name = "expect_netdev_speed", .type = KEY_INT, .def = "0", .min = 0, .max = 10000000,
	  .offset = offsetof(struct driver_cfg, expect_netdev_speed),
	  .help = "RoCE: the port's netdev speed in Mb/s (/sys/class/net/IF/speed: 100000 for 100GbE; 0: not judged)" },
	{ .name = "fw_query", .type = KEY_BOOL, .def = "true",
	  .offset = offsetof(struct driver_cfg, fw_query),
	  .help = "ask mstflint -d BDF q and mlxfwmanager --query -d BDF for the flashed and the running firmware and the PSID (not judged where a tool is not installed)" },
	{ .name = "fw_pending_ok", .type = KEY_BOOL, .def = "false",
	  .offset = offsetof(struct driver_cfg, fw_pending_ok),
	  .help = "accept a flashed firmware that is not running yet (a staged upgrade waiting for a reset)" },
	{ .name = "allow_vf", .type = KEY_BOOL, .def = "true",
	  .offset = offsetof(struct driver_cfg, allow_vf),
	  .help = "accept SR-IOV virtual functions as devices under test" },
	{ .name = "min_devices", .type = KEY_INT, .def = "1", .min = 0, .max = 4096,
	  .offset = offsetof(struct driver_cfg, min_devices),
	  .help = "at least this many RDMA devices must be selected" },
	KEY_END
};

static const char *const hca_modules[] = { "mlx5_core", "mlx5_ib", "ib_core", "ib_uverbs", "rdma_ucm", NULL };
static const char *const rxe_modules[] = { "rdma_rxe", "ib_core", "ib_uverbs", NULL };

static int driver_validate(const struct rq_case *c, char *err, size_t errsz)
{
	const struct driver_cfg *cfg = c->cfg;
	const struct rq_list *lists[] = { &cfg->fw_ver, &cfg->min_fw };

	for (size_t l = 0; l < ARRAY_SIZE(lists); l++)
		for (size_t i = 0; i < lists[l]->n; i++)
			if (fw_major(lists[l]->str[i]) < 0) {
				snprintf(err, errsz, "firmware version \"%s\" is not dotted numbers (20.35.1012)",
					 lists[l]->str[i]);
				return -1;
			}
	if (cfg->link_layer && strcmp(cfg->link_layer, "InfiniBand") && strcmp(cfg->link_layer, "Ethernet")) {
		snprintf(err, errsz, "link_layer must be InfiniBand or Ethernet, not \"%s\"", cfg->link_layer);
		return -1;
	}
	return 0;
}

static void judge_modules(struct rq_ctx *ctx, struct rq_result *row, const struct driver_cfg *cfg,
			  bool virt)
{
	const char *const *def = virt ? rxe_modules : hca_modules;
	size_t n = cfg->modules.n;

	for (size_t i = 0; n ? i < n : def[i] != NULL; i++) {
		const char *m = n ? cfg->modules.str[i] : def[i];
		char state[64];

		rq_judge(row, node_module_live(ctx, m, state, sizeof(state)) == 0,
			 "module %s is %s", m, state);
	}
}

static bool model_ok(const struct rq_list *models, const struct rdma_dev *d, const char *name)
{
	for (size_t i = 0; i < models->n; i++) {
		const char *m = models->str[i];

		if (!strcasecmp(m, name))
			return true;
		if (str_starts(m, "0x") && strtoul(m, NULL, 16) == d->device)
			return true;
	}
	return false;
}

/*
 * `mstflint -d BDF q`: "FW Version:" is the flashed image, and a line
 * "FW Version(Running):" appears when the running one differs (a burned
 * upgrade waiting for mlxfwreset or a cold reboot); "PSID:" names the
 * board's firmware flavour, which sysfs board_id also shows.
 */
static void judge_fw_query(struct rq_ctx *ctx, struct rq_result *row, const struct driver_cfg *cfg,
			   const struct rdma_dev *d)
{
	const char *argv[] = { "mstflint", "-d", d->pci, "q", NULL };
	char flashed[64] = "", running[64] = "", psid[64] = "";
	struct proc_result r;
	const char *line;

	proc_result_init(&r);
	if (rq_tool(ctx, argv, 30000, &r) < 0 || r.exec_failed) {
		rq_fact_add(row, "fw_query", ctx->replay ? "not run: the capture holds no mstflint output" :
			    "not run: mstflint is not installed");
		proc_result_release(&r);
		return;
	}
	if (r.timed_out || r.exit_code != 0) {
		rq_fact_add(row, "fw_query", "mstflint q failed (no access to the device's config space?)");
		proc_result_release(&r);
		return;
	}
	for (line = r.out.buf; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
		char key[40], val[64];

		if (sscanf(line, "%39[^:]: %63s", key, val) != 2)
			continue;
		strtrim(key);
		if (!strcmp(key, "FW Version"))
			snprintf(flashed, sizeof(flashed), "%s", val);
		else if (!strcmp(key, "FW Version(Running)"))
			snprintf(running, sizeof(running), "%s", val);
		else if (!strcmp(key, "PSID"))
			snprintf(psid, sizeof(psid), "%s", val);
	}
	proc_result_release(&r);
	if (!flashed[0]) {
		rq_fact_add(row, "fw_query", "mstflint q printed no FW Version");
		return;
	}
	if (!running[0])
		snprintf(running, sizeof(running), "%s", flashed);
	rq_fact_add(row, "fw_flashed", flashed);
	rq_fact_add(row, "fw_running", running);
	if (psid[0])
		rq_fact_add(row, "psid", psid);
	if (!cfg->fw_pending_ok)
		rq_judge(row, !strcmp(flashed, running),
			 "%s (%s): firmware %s is flashed but %s is running: the upgrade waits for a reset "
			 "(mlxfwreset, or a cold reboot)", d->name, d->pci, flashed, running);
	if (psid[0] && d->board_id[0])
		rq_judge(row, !strcmp(psid, d->board_id), "%s: mstflint reports PSID %s, sysfs board_id %s",
			 d->name, psid, d->board_id);
}

/*
 * `mlxfwmanager --query -d BDF` (MFT), beside mstflint: under "Versions",
 * "FW" is the flashed image and "FW (Running)" appears when another one
 * runs; "PSID:" as mstflint's.  Facts fwmanager_*; a node without MFT
 * records that and judges nothing here.
 */
static void judge_fwmanager(struct rq_ctx *ctx, struct rq_result *row, const struct driver_cfg *cfg,
			    const struct rdma_dev *d)
{
	const char *argv[] = { "mlxfwmanager", "--query", "-d", d->pci, NULL };
	struct proc_result r;
	struct fwm_query q;
	char err[200];

	proc_result_init(&r);
	if (rq_tool(ctx, argv, 60000, &r) < 0 || r.exec_failed) {
		rq_fact_add(row, "fwmanager", ctx->replay ?
			    "not run: the capture holds no mlxfwmanager output" :
			    "not run: mlxfwmanager (MFT) is not installed");
		proc_result_release(&r);
		return;
	}
	if (r.timed_out || r.exit_code != 0 ||
	    fwmanager_parse(r.out.buf ? r.out.buf : "", r.out.len, &q, err, sizeof(err))) {
		rq_fact_add(row, "fwmanager", r.timed_out || r.exit_code ?
			    "mlxfwmanager --query failed (mst not started, or no access?)" : err);
		proc_result_release(&r);
		return;
	}
	proc_result_release(&r);
	const struct fwm_device *m = q.n ? &q.dev[0] : NULL;
	const char *fw = m ? fwm_current(m, "FW") : NULL, *run = m ? fwm_current(m, "FW (Running)") : NULL;

	if (!fw) {
		rq_fact_add(row, "fwmanager", "mlxfwmanager --query printed no FW version");
		fwmanager_release(&q);
		return;
	}
	rq_fact_add(row, "fwmanager_flashed", fw);
	rq_fact_add(row, "fwmanager_running", run ? run : fw);
	if (m->psid[0])
		rq_fact_add(row, "fwmanager_psid", m->psid);
	if (m->status[0])
		rq_fact_add(row, "fwmanager_status", m->status);
	if (!cfg->fw_pending_ok)
		rq_judge(row, !run || !strcmp(fw, run),
			 "%s (%s): mlxfwmanager: firmware %s is flashed but %s is running: the upgrade "
			 "waits for a reset (mlxfwreset, or a cold reboot)", d->name, d->pci, fw, run);
	if (m->psid[0] && d->board_id[0])
		rq_judge(row, !strcmp(m->psid, d->board_id), "%s: mlxfwmanager reports PSID %s, sysfs "
			 "board_id %s", d->name, m->psid, d->board_id);
	fwmanager_release(&q);
}

static void judge_hca(struct rq_ctx *ctx, struct rq_result *row, const struct driver_cfg *cfg,
		      const struct rdma_dev *d)
{
	const struct mlx_model *m = mlx_model_find(d->device);
	char buf[64];
	const char *name = mlx_model_name(d->device, buf, sizeof(buf));
	long major = fw_major(d->fw_ver);

	if (d->pci[0])
		rq_fact_add(row, "pci", d->pci);
	rq_judge(row, d->vendor == PCI_VENDOR_MELLANOX,
		 "%s: PCI vendor 0x%04x is not Mellanox/NVIDIA 0x15b3", d->name, d->vendor);
	if (d->vendor != PCI_VENDOR_MELLANOX)
		return;
	rq_fact_add(row, "model", name);
	rq_judge(row, m != NULL, "%s: PCI device id 0x%04x is no known ConnectX/BlueField part",
		 d->name, d->device);
	if (m && m->vf) {
		rq_fact_add(row, "function", "virtual function");
		if (!cfg->allow_vf)
			rq_judge(row, false, "%s is an SR-IOV virtual function (%s)", d->name, name);
	}
	if (cfg->models.n)
		rq_judge(row, model_ok(&cfg->models, d, name), "%s is a %s (0x%04x), not an accepted model",
			 d->name, name, d->device);
	rq_judge(row, !strcmp(d->driver, "mlx5_core"), "%s (%s): PCI function bound to %s, not mlx5_core",
		 d->name, d->pci, d->driver[0] ? d->driver : "no driver");
	if (d->board_id[0])
		rq_fact_add(row, "board_id", d->board_id);
	rq_fact_add(row, "fw_ver", d->fw_ver[0] ? d->fw_ver : "(none)");
	if (!rq_judge(row, d->fw_ver[0] && major >= 0, "%s: no firmware version in sysfs", d->name))
		return;
	/* A firmware of another family means a mis-flashed card or a wrong id. */
	if (m && m->fw_major)
		rq_judge(row, major == (long)m->fw_major,
			 "%s: firmware %s is of family %ld, but PCI id 0x%04x is a %s (family %u)",
			 d->name, d->fw_ver, major, d->device, name, m->fw_major);
	if (cfg->fw_ver.n) {
		const char *pin = NULL;

		for (size_t i = 0; i < cfg->fw_ver.n; i++)
			if (fw_major(cfg->fw_ver.str[i]) == major)
				pin = cfg->fw_ver.str[i];
		if (rq_judge(row, pin != NULL, "%s: firmware %s (family %ld) has no pinned version",
			     d->name, d->fw_ver, major))
			rq_judge(row, fw_cmp(d->fw_ver, pin) == 0, "%s: firmware %s, pinned %s",
				 d->name, d->fw_ver, pin);
	}
	for (size_t i = 0; i < cfg->min_fw.n; i++)
		if (fw_major(cfg->min_fw.str[i]) == major)
			rq_judge(row, fw_cmp(d->fw_ver, cfg->min_fw.str[i]) >= 0,
				 "%s: firmware %s is older than the minimum %s", d->name, d->fw_ver,
				 cfg->min_fw.str[i]);
	if (cfg->fw_query && d->pci[0] && !(m && m->vf)) {
		judge_fw_query(ctx, row, cfg, d);
		judge_fwmanager(ctx, row, cfg, d);
	}
}

static void judge_rxe(struct rq_ctx *ctx, struct rq_result *row, const struct driver_cfg *cfg,
		      const struct rdma_dev *d)
{
	char path[PATH_MAX];
	struct stat st;

	if (!rq_judge(row, d->parent[0] != 0, "%s: virtual device without a parent netdev (not rxe?)",
		      d->name))
		return;
	rq_fact_add(row, "parent", d->parent);
	if (cfg->parent)
		rq_judge(row, !strcmp(cfg->parent, d->parent), "%s sits on %s, expected %s", d->name,
			 d->parent, cfg->parent);
	rq_path(ctx, path, sizeof(path), "/sys/class/net/%s", d->parent);
	rq_judge(row, stat(path, &st) == 0, "%s: parent netdev %s does not exist", d->name, d->parent);
}

/*
 * The link a lab expects, port by port: a rail that trained at HDR or 2X
 * passes every relative check, so the rate, width and speed are compared
 * with what the case says (sysfs rate "400 Gb/sec (4X NDR)", drivers/
 * infiniband/core/sysfs.c rate_show), and on RoCE the netdev's speed.
 */
static void judge_link(struct rq_ctx *ctx, struct rq_result *row, const struct driver_cfg *cfg,
		       const struct rdma_dev *d, const struct rdma_port *p)
{
	char width[8] = "", speed[16] = "", path[PATH_MAX], v[32];
	const char *open = strchr(p->rate_str, '(');

	if (p->state != PORT_ACTIVE || d->is_virtual)
		return;
	if (open && sscanf(open, "(%7[0-9X] %15[A-Z0-9])", width, speed) < 1)
		width[0] = speed[0] = '\0';
	if (cfg->expect_rate)
		rq_judge(row, p->rate_gbps == (double)cfg->expect_rate,
			 "%s port %d runs at %s, expected %lld Gb/s", d->name, p->num,
			 p->rate_str[0] ? p->rate_str : "an unknown rate", cfg->expect_rate);
	if (cfg->expect_width)
		rq_judge(row, !strcasecmp(width, cfg->expect_width), "%s port %d width %s (%s), expected %s",
			 d->name, p->num, width[0] ? width : "unknown", p->rate_str, cfg->expect_width);
	if (cfg->expect_speed)
		rq_judge(row, !strcasecmp(speed, cfg->expect_speed), "%s port %d lane speed %s (%s), expected %s",
			 d->name, p->num, speed[0] ? speed : "unknown", p->rate_str, cfg->expect_speed);
	if (!strcmp(p->link_layer, "Ethernet") && p->netdev[0]) {
		long mbps = -1;

		/* net-sysfs.c speed_show: Mb/s, -1 when unknown */
		rq_path(ctx, path, sizeof(path), "/sys/class/net/%s/speed", p->netdev);
		if (!read_line(path, v, sizeof(v))) {
			mbps = strtol(v, NULL, 10);
			rq_fact_add(row, "netdev_speed", v);
		}
		if (cfg->expect_netdev_speed)
			rq_judge(row, mbps == cfg->expect_netdev_speed, "%s port %d: netdev %s speed %ld Mb/s, expected %lld",
				 d->name, p->num, p->netdev, mbps, cfg->expect_netdev_speed);
	}
}

static void judge_port(struct rq_ctx *ctx, struct rq_result *row, const struct driver_cfg *cfg,
		       const struct rdma_dev *d, const struct rdma_port *p)
{
	rq_fact_add(row, "link_layer", p->link_layer[0] ? p->link_layer : "(unknown)");
	if (p->rate_str[0])
		rq_fact_add(row, "rate", p->rate_str);
	if (d->is_virtual)
		rq_judge(row, !strcmp(p->link_layer, "Ethernet"), "%s port %d: link layer %s, rxe is Ethernet",
			 d->name, p->num, p->link_layer);
	if (cfg->link_layer)
		rq_judge(row, !strcmp(p->link_layer, cfg->link_layer), "%s port %d: link layer %s, expected %s",
			 d->name, p->num, p->link_layer, cfg->link_layer);
	if (cfg->port_active) {
		const char *hint = "";
		bool ib = !strcmp(p->link_layer, "InfiniBand");

		if (p->state == PORT_INIT && ib)
			hint = " (no subnet manager has configured it)";
		else if (p->phys_state == 2)
			hint = " (Polling: no cable, or no peer at the other end)";
		else if (p->phys_state == 3)
			hint = " (Disabled: the port is administratively down)";
		if (!rq_judge(row, p->state == PORT_ACTIVE, "%s port %d is %s (physical state %s)%s", d->name,
			      p->num, p->state_str[0] ? p->state_str : "unknown",
			      p->phys_str[0] ? p->phys_str : "unknown", hint))
			return;
		/* ib_verbs.h IB_PORT_PHYS_STATE_LINK_UP */
		rq_judge(row, p->phys_state == 5, "%s port %d is ACTIVE but its physical state is %s, not LinkUp",
			 d->name, p->num, p->phys_str[0] ? p->phys_str : "unknown");
		if (ib) {
			char v[16];

			snprintf(v, sizeof(v), "0x%x", p->lid);
			rq_fact_add(row, "lid", v);
			snprintf(v, sizeof(v), "0x%x", p->sm_lid);
			rq_fact_add(row, "sm_lid", v);
			rq_judge(row, p->lid != 0, "%s port %d is ACTIVE with LID 0 (the SM gave it none)",
				 d->name, p->num);
			rq_judge(row, p->sm_lid != 0, "%s port %d is ACTIVE with SM LID 0 (no SM known)",
				 d->name, p->num);
		}
	}
	judge_link(ctx, row, cfg, d, p);
}

/*
 * libibverbs opened the device and answered ibv_query_device and
 * ibv_query_port for every port: the uverbs node existing is not enough
 * (a provider library missing, an ABI mismatch, a device stuck in reset).
 */
static void judge_verbs(struct rq_result *row, const struct rdma_dev *d, const struct rdma_port *pt,
			int pr, const struct vb_probe *pb, const char *why)
{
	char v[160];

	if (!rq_judge(row, pr == 0, "%s: verbs cannot use it: %s", d->name, why))
		return;
	snprintf(v, sizeof(v), "opened; %d port%s, fw %s, max_qp %d", pb->phys_port_cnt,
		 pb->phys_port_cnt == 1 ? "" : "s", pb->fw_ver[0] ? pb->fw_ver : "-", pb->max_qp);
	rq_fact_add(row, "verbs", v);
	rq_judge(row, pb->phys_port_cnt == d->nports, "%s: libibverbs reports %d ports, sysfs %d",
		 d->name, pb->phys_port_cnt, d->nports);
	if (pt && pt->num >= 1 && pt->num <= pb->nports)
		rq_fact_add(row, "verbs_port_state", ibv_port_state_str(pb->state[pt->num - 1]));
}

/* The last component of a sysfs link under root (a driver's name), or "". */
static void pci_link_base(struct rq_ctx *ctx, const char *bdf, const char *attr, char *buf,
			  size_t size)
{
	char path[PATH_MAX], t[PATH_MAX];
	ssize_t len;
	const char *b;

	buf[0] = '\0';
	rq_path(ctx, path, sizeof(path), "/sys/bus/pci/devices/%s/%s", bdf, attr);
	len = readlink(path, t, sizeof(t) - 1);
	if (len <= 0)
		return;
	t[len] = '\0';
	b = strrchr(t, '/');
	snprintf(buf, size, "%.*s", (int)size - 1, b ? b + 1 : t);
}

/*
 * RoCE LAG: mlx5 registers one RDMA device (mlx5_bond_N) on the first PF
 * and none on the second, whose netdev is a slave of the same bond (its
 * `master` link).  The RDMA device of a sibling function (same
 * domain:bus:device) covers it; its name goes into dev.
 */
static bool lag_second_pf(struct rq_ctx *ctx, const struct rdma_devs *devs, const char *bdf,
			  char *dev, size_t devsz)
{
	char path[PATH_MAX], master[64] = "";
	struct dirent **nets = NULL;
	int n;
	size_t slot = strlen(bdf) > 2 ? strlen(bdf) - 2 : 0;	/* "0000:3b:00" of "0000:3b:00.1" */

	rq_path(ctx, path, sizeof(path), "/sys/bus/pci/devices/%s/net", bdf);
	n = scandir(path, &nets, NULL, alphasort);
	for (int i = 0; i < n; i++) {
		if (!master[0] && nets[i]->d_name[0] != '.') {
			snprintf(path, sizeof(path), "net/%s/master", nets[i]->d_name);
			pci_link_base(ctx, bdf, path, master, sizeof(master));
		}
		free(nets[i]);
	}
	free(nets);
	if (!master[0])
		return false;
	for (int k = 0; k < devs->n; k++)
		if (!strncmp(devs->v[k].pci, bdf, slot) && strcmp(devs->v[k].pci, bdf)) {
			snprintf(dev, devsz, "%s (bond %s)", devs->v[k].name, master);
			return true;
		}
	return false;
}

/*
 * PCI functions of vendor 0x15b3 without an RDMA device.  Several have
 * none by design and are facts, not faults (a SKIP row that says what
 * they are): the card's own PCIe bridge functions (class 0x0604, bound to
 * pcieport), BlueField SoC management functions, virtual functions handed
 * to vfio-pci (a guest owns them) or left unprobed, and the second PF of a
 * RoCE LAG, which the bond's RDMA device covers.  A PF bound to mlx5_core
 * without an RDMA device (mlx5_ib missing) or bound to nothing is a FAIL.
 */
static void orphan_functions(struct rq_ctx *ctx, const struct rdma_devs *devs)
{
	char path[PATH_MAX], v[64];
	struct dirent **names = NULL;
	int n;

	rq_path(ctx, path, sizeof(path), "/sys/bus/pci/devices");
	n = scandir(path, &names, NULL, alphasort);
	for (int i = 0; i < n; i++) {
		const char *bdf = names[i]->d_name;
		bool have = false, vf;
		struct rq_result *row;
		char mb[64] = "", drv[64], cls[32] = "", cover[128];
		const char *model = "unknown", *mgmt = NULL;
		const struct mlx_model *m = NULL;
		struct stat st;

		if (bdf[0] == '.')
			goto next;
		rq_path(ctx, path, sizeof(path), "/sys/bus/pci/devices/%s/vendor", bdf);
		if (read_line(path, v, sizeof(v)) || strtoul(v, NULL, 16) != PCI_VENDOR_MELLANOX)
			goto next;
		for (int k = 0; k < devs->n; k++)
			have |= !strcmp(devs->v[k].pci, bdf);
		if (have)
			goto next;
		row = rq_ctx_row(ctx, bdf, 0);
		rq_path(ctx, path, sizeof(path), "/sys/bus/pci/devices/%s/device", bdf);
		if (!read_line(path, v, sizeof(v))) {
			unsigned id = (unsigned)strtoul(v, NULL, 16);

			m = mlx_model_find(id);
			mgmt = mlx_mgmt_function(id);
			model = mgmt ? mgmt : mlx_model_name(id, mb, sizeof(mb));
		}
		rq_path(ctx, path, sizeof(path), "/sys/bus/pci/devices/%s/class", bdf);
		read_line(path, cls, sizeof(cls));
		pci_link_base(ctx, bdf, "driver", drv, sizeof(drv));
		/* the kernel links physfn in every VF (pci/iov.c) */
		rq_path(ctx, path, sizeof(path), "/sys/bus/pci/devices/%s/physfn", bdf);
		vf = lstat(path, &st) == 0 || (m && m->vf);
		rq_fact_add(row, "pci", bdf);
		rq_fact_add(row, "driver", drv[0] ? drv : "(none)");
		if (cls[0])
			rq_fact_add(row, "class", cls);
		if ((strtoul(cls, NULL, 16) >> 8) == 0x0604) {
			if (!m)
				model = "ConnectX/BlueField PCIe bridge";
			rq_result_set(row, RQ_SKIP, "%s (%s) is a PCIe bridge function of the card (class %s, %s): no RDMA device by design",
				      bdf, model, cls, drv[0] ? drv : "no driver");
		} else if (mgmt) {
			rq_result_set(row, RQ_SKIP, "%s is a %s (%s): no RDMA device by design", bdf, mgmt,
				      drv[0] ? drv : "no driver");
		} else if (vf && drv[0] && strcmp(drv, "mlx5_core")) {
			rq_result_set(row, RQ_SKIP, "%s (%s) is a virtual function bound to %s (passed to a guest): not this node's RDMA device",
				      bdf, model, drv);
		} else if (vf && !drv[0]) {
			rq_result_set(row, RQ_SKIP, "%s (%s) is a virtual function not probed by any driver (sriov_drivers_autoprobe 0?)",
				      bdf, model);
		} else if (vf) {
			rq_result_set(row, RQ_SKIP, "%s (%s) is a virtual function on mlx5_core without an RDMA device (name it in devices: to judge it)",
				      bdf, model);
		} else if (!strcmp(drv, "mlx5_core") && lag_second_pf(ctx, devs, bdf, cover, sizeof(cover))) {
			rq_fact_add(row, "roce_lag", cover);
			rq_result_set(row, RQ_SKIP, "%s (%s) is the second PF of a RoCE LAG: %s covers both",
				      bdf, model, cover);
		}
		rq_fact_add(row, "model", model);
		/* the by-design cases above are reported; a PF without a device fails */
		if (row->verdict == RQ_NONE && drv[0])
			rq_judge(row, false, "%s (%s) is bound to %s but has no RDMA device (mlx5_ib not loaded?)",
				 bdf, model, drv);
		else if (row->verdict == RQ_NONE)
			rq_judge(row, false, "%s (%s) is not bound to any driver (mlx5_core)", bdf, model);
next:
		free(names[i]);
	}
	free(names);
}

static void driver_run(struct rq_ctx *ctx, const void *p)
{
	const struct driver_cfg *cfg = p;
	struct rdma_devs devs;
	char missing[64];
	int *idx, n, ret;
	bool all = !ctx->c->devices || !strcmp(ctx->c->devices, "all");

	ret = rdma_devs_scan(ctx, &devs);
	if (ret < 0) {
		rq_result_set(ctx->main, RQ_ERROR, "cannot read /sys/class/infiniband: %s", strerror(-ret));
		return;
	}
	idx = xcalloc((size_t)devs.n + 1, sizeof(*idx));
	n = rdma_devs_select2(ctx, &devs, idx, devs.n, missing, sizeof(missing));
	if (n == -ENODEV) {
		rq_judge(ctx->main, false, "device %s not found (%d RDMA device%s present)", missing,
			 devs.n, devs.n == 1 ? "" : "s");
		goto out;
	}
	if (all && cfg->profile != PROFILE_RXE)
		orphan_functions(ctx, &devs);
	if (n < cfg->min_devices) {
		char why[160];

		snprintf(why, sizeof(why), "%d RDMA device%s selected, at least %lld expected%s", n,
			 n == 1 ? "" : "s", cfg->min_devices,
			 devs.n ? "" : " (/sys/class/infiniband is empty: no driver, or no rxe link)");
		rq_judge(ctx->main, false, "%s", why);
		node_version_facts(ctx, ctx->main);
		/* Which modules would have been needed says where to look. */
		judge_modules(ctx, ctx->main, cfg, cfg->profile == PROFILE_RXE);
	}
	for (int i = 0; i < n; i++) {
		const struct rdma_dev *d = &devs.v[idx[i]];
		bool virt = d->is_virtual;
		struct vb_probe pb;
		char pwhy[256] = "";
		/* live: what an application does first, once per device */
		int pr = ctx->replay || !d->uverbs[0] ? -ENOENT : vb_probe(d->name, &pb, pwhy, sizeof(pwhy));

		for (int j = 0; j < (d->nports ? d->nports : 1); j++) {
			const struct rdma_port *pt = d->nports ? &d->ports[j] : NULL;
			struct rq_result *row;

			if (pt && !rdma_port_selected(ctx, pt->num))
				continue;
			row = rq_ctx_row(ctx, d->name, pt ? pt->num : 0);
			if (cfg->profile == PROFILE_HCA && virt) {
				rq_result_set(row, RQ_SKIP, "ConnectX-only checks: %s is a virtual %s device",
					      d->name, d->driver[0] ? d->driver : "software");
				continue;
			}
			if (cfg->profile == PROFILE_RXE && !virt) {
				rq_result_set(row, RQ_SKIP, "rxe profile: %s is a PCI device (%s)", d->name,
					      d->driver);
				continue;
			}
			node_version_facts(ctx, row);
			rq_fact_add(row, "driver", d->driver[0] ? d->driver : "(unknown)");
			judge_modules(ctx, row, cfg, virt);
			if (cfg->driver)
				rq_judge(row, !strcmp(d->driver, cfg->driver), "%s uses driver %s, expected %s",
					 d->name, d->driver[0] ? d->driver : "(unknown)", cfg->driver);
			if (virt)
				judge_rxe(ctx, row, cfg, d);
			else
				judge_hca(ctx, row, cfg, d);
			if (rq_judge(row, d->uverbs[0] != 0,
				     "%s has no uverbs device (ib_uverbs not loaded?): verbs cannot open it",
				     d->name)) {
				rq_fact_add(row, "uverbs", d->uverbs);
				if (!ctx->replay) {
					char path[PATH_MAX];
					struct stat st;

					rq_path(ctx, path, sizeof(path), "/dev/infiniband/%s", d->uverbs);
					rq_judge(row, stat(path, &st) == 0 && S_ISCHR(st.st_mode),
						 "%s: /dev/infiniband/%s is missing", d->name, d->uverbs);
					judge_verbs(row, d, pt, pr, &pb, pwhy);
				}
			}
			if (!rq_judge(row, pt != NULL, "%s has no ports in sysfs", d->name))
				continue;
			judge_port(ctx, row, cfg, d, pt);
		}
	}
out:
	free(idx);
	rdma_devs_release(&devs);
}

/* The functions it judges, the firmware tools, the modules of each profile, /dev/infiniband */
static const struct rq_read driver_reads[] = {
	RQ_READS_PCI_VENDOR(0x15b3),
	RQ_READS_PCI("sriov_drivers_autoprobe", RQ_PCI_ALL), RQ_READS_PCI("physfn", RQ_PCI_ALL),
	RQ_READS_NETDEV("speed"), RQ_READS_NETDEV("master"),
	RQ_READS_MODULE("mlx5_core", 0), RQ_READS_MODULE("mlx5_ib", 0), RQ_READS_MODULE("ib_core", 0),
	RQ_READS_MODULE("ib_uverbs", 0), RQ_READS_MODULE("rdma_ucm", 0), RQ_READS_MODULE("rdma_rxe", 0),
	RQ_READS_TREE("/dev/infiniband", 1),
	RQ_READS_TOOL("mstflint", "-d", "{pci}", "q"), RQ_READS_TOOL("mlxfwmanager", "--query", "-d", "{pci}"),
	RQ_READS_END,
};

const struct rq_kind rq_kind_driver = {
	.name = "driver",
	.summary = "RDMA stack present on every device and port: modules, driver, model, firmware, uverbs, port state",
	.doc = "Checks what a driver upgrade breaks first, one row per device and port: the stack's "
	       "modules live, every ConnectX PF bound to mlx5_core with an RDMA device (bridge and "
	       "BlueField management functions, VFs given to guests or unprobed, and a RoCE LAG's "
	       "second PF are reported as SKIP rows, not failed), the PCI id mapped to its model "
	       "(virtual functions recognised) and to its firmware family, firmware pinned or above "
	       "a minimum per family, the uverbs device present, every port ACTIVE.  On rxe it checks "
	       "rdma_rxe/ib_core/ib_uverbs, the parent netdev and the Ethernet link layer; "
	       "ConnectX-only checks do not apply there.  Kernel, rdma-core, OFED and firmware "
	       "versions are recorded as facts for before/after comparisons.",
	.keys = driver_keys,
	.reads = driver_reads,
	.cfg_size = sizeof(struct driver_cfg),
	.default_targets = "hca,rxe-vm,sysroot",
	.validate = driver_validate,
	.run = driver_run,
};
