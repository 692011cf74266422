/* SPDX-License-Identifier: MIT */
#ifndef HEAL_DEFAULTS_H
#define HEAL_DEFAULTS_H

/* Every default limit of libheal, in one place. Units are in the names. */

#define HEAL_DEFAULT_PIDS_MAX         2048ULL
#define HEAL_DEFAULT_NOFILE_MAX       4096ULL
#define HEAL_DEFAULT_OUT_MAX_BYTES    (16ULL << 20)
#define HEAL_DEFAULT_TMPFS_MAX_BYTES  (512ULL << 20)
#define HEAL_DEFAULT_TMPFS_MAX_INODES 131072ULL
#define HEAL_DEFAULT_GRACE_MS         1000ULL
/* Size of the tmpfs that holds the default view's root (mountpoints only; read-only once set). */
#define HEAL_DEFAULT_ROOT_TMPFS_BYTES (1ULL << 20)
/* Processes listed in a timeout snapshot. */
#define HEAL_SNAPSHOT_PROCS_MAX 64

#endif
