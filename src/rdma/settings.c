/* SPDX-License-Identifier: MIT */
/*
 * Node settings the settings kinds change and their undo records restore:
 * the netdev MTU and IRQ affinity, on the live node or in a tree (a
 * writable copy of a node fixture, for tests), and what identifies each
 * beyond its name (a netdev's ifindex and permanent MAC, an IRQ's vector)
 * so that a restore after a rename or a renumbering finds it again.
 */
#include <dirent.h>
#include <errno.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <limits.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/undo.h"
#include "core/util.h"
#include "rdma/settings.h"

static bool live_root(const char *root)
{
	return !root || !*root || !strcmp(root, "/");
}

int netdev_get_mtu(const char *root, const char *ifname, int *mtu)
{
	char path[PATH_MAX], v[32];
	int ret;

	snprintf(path, sizeof(path), "%s/sys/class/net/%s/mtu", live_root(root) ? "" : root, ifname);
	ret = read_line(path, v, sizeof(v));
	if (ret == 0)
		*mtu = atoi(v);
	return ret;
}

int netdev_set_mtu(const char *root, const char *ifname, int mtu)
{
	char path[PATH_MAX], v[32];

	if (strchr(ifname, '/') || strlen(ifname) >= IFNAMSIZ)
		return -EINVAL;
	if (live_root(root)) {
		/* The kernel's own interface, as ip(8) uses: no tool in between. */
		struct ifreq ifr;
		int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), ret = 0;

		if (s < 0)
			return -errno;
		memset(&ifr, 0, sizeof(ifr));
		snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
		ifr.ifr_mtu = mtu;
		if (ioctl(s, SIOCSIFMTU, &ifr) < 0)
			ret = -errno;
		close(s);
		return ret;
	}
	/* A tree (a writable copy of a node): the attribute file itself. */
	snprintf(path, sizeof(path), "%s/sys/class/net/%s/mtu", root, ifname);
	if (access(path, F_OK) < 0)
		return -ENODEV;
	snprintf(v, sizeof(v), "%d\n", mtu);
	return write_file_atomic(path, v, strlen(v));
}

int irq_set_affinity(const char *root, int irq, const char *cpulist)
{
	char path[PATH_MAX], v[4096];

	int ret;

	snprintf(v, sizeof(v), "%s\n", cpulist);
	if (live_root(root)) {
		snprintf(path, sizeof(path), "/proc/irq/%d/smp_affinity_list", irq);
		return write_str(path, v);
	}
	/*
	 * A tree has no kernel to route the vector: the effective list
	 * follows the request, as it does for a non-managed MSI-X vector.
	 */
	snprintf(path, sizeof(path), "%s/proc/irq/%d/smp_affinity_list", root, irq);
	if (access(path, F_OK) < 0)
		return -ENOENT;
	ret = write_file_atomic(path, v, strlen(v));
	snprintf(path, sizeof(path), "%s/proc/irq/%d/effective_affinity_list", root, irq);
	if (!ret)
		ret = write_file_atomic(path, v, strlen(v));
	return ret;
}

/* The permanent MAC of a live netdev (ETHTOOL_GPERMADDR), else "". */
static void perm_mac(const char *ifname, char *buf, size_t size)
{
	/* struct ethtool_perm_addr ends in a flexible array: room for 32 bytes after it. */
	_Alignas(struct ethtool_perm_addr) unsigned char raw[sizeof(struct ethtool_perm_addr) + 32] = { 0 };
	struct ethtool_perm_addr *pa = (struct ethtool_perm_addr *)raw;
	struct ifreq ifr;
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	size_t o = 0;
	bool any = false;

	buf[0] = '\0';
	if (s < 0)
		return;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	pa->cmd = ETHTOOL_GPERMADDR;
	pa->size = 32;
	ifr.ifr_data = (void *)pa;
	if (ioctl(s, SIOCETHTOOL, &ifr) == 0 && pa->size <= 32) {
		for (unsigned i = 0; i < pa->size; i++)
			any |= pa->data[i] != 0;
		for (unsigned i = 0; any && i < pa->size && o + 4 < size; i++)
			o += (size_t)snprintf(buf + o, size - o, "%s%02x", i ? ":" : "", pa->data[i]);
	}
	close(s);
}

/*
 * What a netdev is, beyond its name (names move: a rename, another device
 * after a driver reload): "ifindex=N,mac=M", the MAC the permanent one
 * where the driver reports it.  Parts that cannot be read are left out.
 */
void netdev_ident(const char *root, const char *ifname, char *buf, size_t size)
{
	char path[PATH_MAX], ifx[32] = "", mac[128] = "";
	const char *r = live_root(root) ? "" : root;

	snprintf(path, sizeof(path), "%s/sys/class/net/%s/ifindex", r, ifname);
	read_line(path, ifx, sizeof(ifx));
	if (live_root(root))
		perm_mac(ifname, mac, sizeof(mac));
	if (!mac[0]) {
		snprintf(path, sizeof(path), "%s/sys/class/net/%s/address", r, ifname);
		read_line(path, mac, sizeof(mac));
	}
	snprintf(buf, size, "ifindex=%s,mac=%s", ifx[0] ? ifx : "-", mac[0] ? mac : "-");
}

/* The action name of an IRQ (its device and vector: "mlx5_comp0@pci:0000:af:00.0"), or "". */
void irq_vector(const char *root, int irq, char *buf, size_t size)
{
	char path[PATH_MAX];
	struct sb t = SB_INIT;
	char *save = NULL;

	buf[0] = '\0';
	snprintf(path, sizeof(path), "%s/proc/interrupts", live_root(root) ? "" : root);
	if (read_file(path, &t, 4u << 20) < 0 && !t.len) {
		sb_release(&t);
		return;
	}
	for (char *l = t.len ? strtok_r(t.buf, "\n", &save) : NULL; l; l = strtok_r(NULL, "\n", &save)) {
		char *end;
		long n = strtol(l, &end, 10);
		char *last;

		size_t len = strlen(l);

		if (end == l || *end != ':' || n != irq)
			continue;
		while (len && (l[len - 1] == ' ' || l[len - 1] == '\r'))
			l[--len] = '\0';
		last = strrchr(l, ' ');
		snprintf(buf, size, "%s", last ? last + 1 : "");
		break;
	}
	sb_release(&t);
}

/* The IRQ whose action name is vector, or -1. */
int irq_by_vector(const char *root, const char *vector)
{
	char path[PATH_MAX];
	struct sb t = SB_INIT;
	char *save = NULL;
	int found = -1;

	snprintf(path, sizeof(path), "%s/proc/interrupts", live_root(root) ? "" : root);
	if (read_file(path, &t, 4u << 20) < 0 && !t.len) {
		sb_release(&t);
		return -1;
	}
	for (char *l = t.len ? strtok_r(t.buf, "\n", &save) : NULL; l && found < 0;
	     l = strtok_r(NULL, "\n", &save)) {
		char *end, *last;
		long n = strtol(l, &end, 10);
		size_t len = strlen(l);

		while (len && (l[len - 1] == ' ' || l[len - 1] == '\r'))
			l[--len] = '\0';
		last = strrchr(l, ' ');
		if (end != l && *end == ':' && last && !strcmp(last + 1, vector))
			found = (int)n;
	}
	sb_release(&t);
	return found;
}

/*
 * The netdev a record meant: the recorded name when it still is that
 * device, else the device with the recorded ifindex and MAC under another
 * name.  0 with name set, or -ENODEV.
 */
int netdev_find(const char *root, const char *ifname, const char *ident, char *name,
		       size_t size)
{
	char want_ix[32], want_mac[128], now[256], ix[32], mac[128], path[PATH_MAX];
	DIR *d;
	struct dirent *e;
	int ret = -ENODEV;

	undo_ident_part(ident, "ifindex", want_ix, sizeof(want_ix));
	undo_ident_part(ident, "mac", want_mac, sizeof(want_mac));
	snprintf(name, size, "%s", ifname);
	if (!want_ix[0] && !want_mac[0])
		return 0;	/* nothing recorded to check against */
	netdev_ident(root, ifname, now, sizeof(now));
	undo_ident_part(now, "ifindex", ix, sizeof(ix));
	undo_ident_part(now, "mac", mac, sizeof(mac));
	if ((!want_ix[0] || !strcmp(ix, want_ix)) && (!want_mac[0] || !strcasecmp(mac, want_mac)))
		return 0;
	snprintf(path, sizeof(path), "%s/sys/class/net", live_root(root) ? "" : root);
	d = opendir(path);
	while (d && (e = readdir(d)) && ret) {
		if (e->d_name[0] == '.')
			continue;
		netdev_ident(root, e->d_name, now, sizeof(now));
		undo_ident_part(now, "ifindex", ix, sizeof(ix));
		undo_ident_part(now, "mac", mac, sizeof(mac));
		if ((!want_ix[0] || !strcmp(ix, want_ix)) && (!want_mac[0] || !strcasecmp(mac, want_mac))) {
			snprintf(name, size, "%s", e->d_name);
			ret = 0;
		}
	}
	if (d)
		closedir(d);
	return ret;
}
