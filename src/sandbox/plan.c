/* SPDX-License-Identifier: MIT */
/*
 * The mount plan: validating entries as they are added, the default view, and compiling the plan
 * into child_ops whose strings are all built here, so the child never allocates.
 *
 * Semantics follow ../shared/seeds/xgo-sandbox-readme.txt: an empty plan is the default view, a
 * nonempty one replaces it and starts with a bind or tmpfs at "/", entries apply in order.
 */
#include <errno.h>
#include <limits.h>
#include <linux/mount.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include "core/parse.h"
#include "core/util.h"
#include "sandbox-internal.h"

#ifndef MOUNT_ATTR_RDONLY
# define MOUNT_ATTR_RDONLY 0x00000001
#endif

static const char *const kind_names[] = {
        [HEAL_MOUNT_BIND] = "bind", [HEAL_MOUNT_TMPFS] = "tmpfs",
        [HEAL_MOUNT_PROC] = "proc", [HEAL_MOUNT_OVERLAY] = "overlay",
        [HEAL_MOUNT_DEV] = "dev",   [MOUNT_KIND_SYMLINK] = "symlink",
};

const char *plan_kind_name(int kind)
{
        if (kind < 0 || kind >= _HEAL_MOUNT_TYPE_MAX)
                return "?";
        return kind_names[kind];
}

heal_mount_type heal_mount_type_from_string(const char *s)
{
        if (!s)
                return _HEAL_MOUNT_TYPE_INVALID;
        for (int i = 0; i < _HEAL_MOUNT_TYPE_MAX; i++)
                if (strcmp(s, kind_names[i]) == 0)
                        return (heal_mount_type)i;
        return _HEAL_MOUNT_TYPE_INVALID;
}

void plan_entry_release(struct mount_entry *e)
{
        free(e->source);
        free(e->target);
        free(e->tmpfs_opts);
        free(e->size);
        free(e->nr_inodes);
        free(e->lowerdir);
        free(e->upperdir);
        free(e->workdir);
        memset(e, 0, sizeof(*e));
}

int plan_entry_dup(struct mount_entry *ret, const struct mount_entry *e)
{
        char *const *from[] = { &e->source,    &e->target,   &e->tmpfs_opts, &e->size,
                                &e->nr_inodes, &e->lowerdir, &e->upperdir,   &e->workdir };
        char **to[] = { &ret->source,    &ret->target,   &ret->tmpfs_opts, &ret->size,
                        &ret->nr_inodes, &ret->lowerdir, &ret->upperdir,   &ret->workdir };

        *ret = *e;
        for (size_t i = 0; i < ELEMENTSOF(to); i++)
                *to[i] = NULL;
        for (size_t i = 0; i < ELEMENTSOF(to); i++)
                if (*from[i] && !(*to[i] = strdup(*from[i]))) {
                        plan_entry_release(ret);
                        return -ENOMEM;
                }
        return 0;
}

/* Normalise an absolute path: collapse "//", drop "/." and a trailing '/'; refuse "..". */
static int normalize_path(char **ret, const char *path)
{
        size_t len = strlen(path);
        char *out, *o;
        const char *p = path;

        if (path[0] != '/')
                return -EINVAL;
        out = malloc(len + 1);
        if (!out)
                return -ENOMEM;
        o = out;
        while (*p) {
                const char *start, *end;

                while (*p == '/')
                        p++;
                if (!*p)
                        break;
                start = p;
                end = strchrnul(p, '/');
                if (end - start == 1 && start[0] == '.') {
                        p = end;
                        continue;
                }
                if (end - start == 2 && start[0] == '.' && start[1] == '.') {
                        free(out);
                        return -EINVAL;
                }
                *o++ = '/';
                memcpy(o, start, (size_t)(end - start));
                o += end - start;
                p = end;
        }
        if (o == out)
                *o++ = '/';
        *o = '\0';
        *ret = out;
        return 0;
}

/* true when @path is @prefix or lies below it, comparing whole components. */
bool path_under(const char *path, const char *prefix)
{
        size_t n = strlen(prefix);

        if (strcmp(prefix, "/") == 0)
                return true;
        return strncmp(path, prefix, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

struct flag_opt {
        const char *name;
        uint64_t bit;
        bool set;
};

static const struct flag_opt flag_opts[] = {
        { "ro", MOUNT_ATTR_RDONLY, true },       { "rw", MOUNT_ATTR_RDONLY, false },
        { "noexec", MOUNT_ATTR_NOEXEC, true },   { "exec", MOUNT_ATTR_NOEXEC, false },
        { "nosuid", MOUNT_ATTR_NOSUID, true },   { "suid", MOUNT_ATTR_NOSUID, false },
        { "nodev", MOUNT_ATTR_NODEV, true },     { "dev", MOUNT_ATTR_NODEV, false },
        { "noatime", MOUNT_ATTR_NOATIME, true }, { "atime", MOUNT_ATTR_NOATIME, false },
};

static bool parse_flag_opt(struct mount_entry *e, const char *opt)
{
        for (size_t i = 0; i < ELEMENTSOF(flag_opts); i++) {
                const struct flag_opt *f = &flag_opts[i];

                if (strcmp(opt, f->name) != 0)
                        continue;
                /* The last option of each pair wins. */
                e->attr_set &= ~f->bit;
                e->attr_clr &= ~f->bit;
                if (f->set)
                        e->attr_set |= f->bit;
                else
                        e->attr_clr |= f->bit;
                return true;
        }
        return false;
}

/* "key=value" -> value when @opt starts with @key=, else NULL. */
static const char *opt_value(const char *opt, const char *key)
{
        size_t n = strlen(key);

        if (strncmp(opt, key, n) == 0 && opt[n] == '=')
                return opt + n + 1;
        return NULL;
}

static int set_str(char **field, const char *v)
{
        char *s = strdup(v);

        if (!s)
                return -ENOMEM;
        free(*field);
        *field = s;
        return 0;
}

/* Only digits (octal ones when @octal), at most 20 of them: no sign, no blanks, no base prefix. */
static bool valid_number(const char *v, bool octal)
{
        size_t n = strspn(v, octal ? "01234567" : "0123456789");

        return n > 0 && n <= 20 && v[n] == '\0';
}

/*
 * A tmpfs amount (size=, nr_inodes=): "N%" is kept as given; anything else is parsed here (K, M,
 * G, T suffixes) and stored as a plain decimal count, so the kernel reads exactly the number the
 * user meant (it would take "064m" for octal) and nothing can be cut short later.
 */
static int set_amount(char **field, const char *v)
{
        size_t n = strlen(v);
        char buf[32];
        uint64_t x;

        if (n > 1 && n <= 4 && v[n - 1] == '%' && strspn(v, "0123456789") == n - 1)
                return set_str(field, v);
        if (parse_size(v, &x) < 0)
                return -EINVAL;
        snprintf(buf, sizeof(buf), "%llu", (unsigned long long)x);
        return set_str(field, buf);
}

/* An absolute sandbox path of @len bytes without a ".." component (it could climb out of the
 * new root to the host's, which sits at /oldroot while the plan is applied). */
static bool valid_sandbox_path(const char *v, size_t len)
{
        /* overlayfs unescapes '\' in layer paths: "/.\./" would become "/../" after this check. */
        if (len == 0 || v[0] != '/' || memchr(v, '\\', len))
                return false;
        for (size_t i = 0; i + 1 < len; i++)
                if (v[i] == '.' && v[i + 1] == '.' && (i == 0 || v[i - 1] == '/') &&
                    (i + 2 == len || v[i + 2] == '/'))
                        return false;
        return true;
}

/* Every ':'-separated layer of lowerdir= must be such a path. */
static bool valid_lowerdir(const char *v)
{
        for (;;) {
                const char *end = strchrnul(v, ':');

                if (!valid_sandbox_path(v, (size_t)(end - v)))
                        return false;
                if (!*end)
                        return true;
                v = end + 1;
        }
}

static int append_opt(char **field, const char *opt)
{
        size_t old = *field ? strlen(*field) : 0;
        char *s = realloc(*field, old + strlen(opt) + 2);

        if (!s)
                return -ENOMEM;
        if (old)
                s[old++] = ',';
        strcpy(s + old, opt);
        *field = s;
        return 0;
}

/* Parse one option of a tmpfs or overlay entry; -EINVAL names nothing, the caller does. */
static int parse_type_opt(struct mount_entry *e, const char *opt)
{
        const char *v;

        if (e->kind == HEAL_MOUNT_TMPFS) {
                if ((v = opt_value(opt, "size")))
                        return set_amount(&e->size, v);
                if ((v = opt_value(opt, "nr_inodes")))
                        return set_amount(&e->nr_inodes, v);
                if ((v = opt_value(opt, "mode")))
                        return valid_number(v, true) && strlen(v) <= 4
                                       ? append_opt(&e->tmpfs_opts, opt)
                                       : -EINVAL;
                if ((v = opt_value(opt, "uid")) || (v = opt_value(opt, "gid")))
                        return valid_number(v, false) ? append_opt(&e->tmpfs_opts, opt) : -EINVAL;
        } else if (e->kind == HEAL_MOUNT_OVERLAY) {
                if ((v = opt_value(opt, "lowerdir")))
                        return valid_lowerdir(v) ? set_str(&e->lowerdir, v) : -EINVAL;
                if ((v = opt_value(opt, "upperdir")))
                        return valid_sandbox_path(v, strlen(v)) ? set_str(&e->upperdir, v)
                                                                : -EINVAL;
                if ((v = opt_value(opt, "workdir")))
                        return valid_sandbox_path(v, strlen(v)) ? set_str(&e->workdir, v) : -EINVAL;
        }
        return -ENOENT;
}

static int entry_parse_options(struct mount_entry *e, const char *const *options, const char *what,
                               heal_error *err)
{
        int r;

        for (size_t i = 0; options && options[i]; i++) {
                const char *opt = options[i];

                if (!*opt)
                        return heal_error_set(err, -EINVAL, "%s: empty option", what);
                if (strchr(opt, ','))
                        return heal_error_set(
                                err, -EINVAL,
                                "%s: option '%s' holds ',': give one option per element", what,
                                opt);
                if (parse_flag_opt(e, opt))
                        continue;
                r = parse_type_opt(e, opt);
                if (r == -ENOMEM)
                        return heal_error_set(err, r, "out of memory");
                if (r == -EINVAL)
                        return heal_error_set(err, r, "%s: bad value in option '%s'", what, opt);
                if (r < 0)
                        return heal_error_set(err, -EINVAL, "%s: unknown option '%s' for type %s",
                                              what, opt, plan_kind_name(e->kind));
        }
        if (e->kind == HEAL_MOUNT_OVERLAY && !e->lowerdir && !e->source)
                return heal_error_set(err, -EINVAL,
                                      "%s: overlay needs a source directory or lowerdir=", what);
        if (e->kind == HEAL_MOUNT_OVERLAY && e->workdir && !e->upperdir)
                return heal_error_set(err, -EINVAL, "%s: workdir= needs upperdir=", what);
        return 0;
}

static int entry_resolve_source(struct mount_entry *e, const char *source, const char *what,
                                heal_error *err)
{
        char real[PATH_MAX];
        struct stat st;

        if (e->kind == MOUNT_KIND_SYMLINK) {
                if (!source || !*source)
                        return heal_error_set(err, -EINVAL,
                                              "%s: symlink needs a source (the link's text)", what);
                return set_str(&e->source, source) < 0
                               ? heal_error_set(err, -ENOMEM, "out of memory")
                               : 0;
        }
        if (e->kind != HEAL_MOUNT_BIND && e->kind != HEAL_MOUNT_OVERLAY) {
                if (source && *source)
                        return heal_error_set(err, -EINVAL, "%s: type %s takes no source", what,
                                              plan_kind_name(e->kind));
                return 0;
        }
        if (!source || !*source) {
                if (e->kind == HEAL_MOUNT_BIND)
                        return heal_error_set(err, -EINVAL, "%s: bind needs a source", what);
                return 0;
        }
        if (source[0] != '/')
                return heal_error_set(err, -EINVAL, "%s: source '%s' is not an absolute path", what,
                                      source);
        /* Symlinks in the source are resolved on the host, once, now. */
        if (!realpath(source, real))
                return heal_error_set(err, -errno, "%s: source '%s': %s", what, source,
                                      strerror(errno));
        if (stat(real, &st) < 0)
                return heal_error_set(err, -errno, "%s: source '%s': %s", what, real,
                                      strerror(errno));
        if (e->kind == HEAL_MOUNT_OVERLAY && !S_ISDIR(st.st_mode))
                return heal_error_set(err, -EINVAL, "%s: overlay source '%s' is not a directory",
                                      what, real);
        e->source_is_dir = S_ISDIR(st.st_mode);
        if (set_str(&e->source, real) < 0)
                return heal_error_set(err, -ENOMEM, "out of memory");
        return 0;
}

int plan_entry_add(struct mount_entry **entries, size_t *n_entries, int kind, const char *source,
                   const char *target, const char *const *options, bool internal, heal_error *err)
{
        _cleanup_(plan_entry_release) struct mount_entry e = { .kind = kind };
        size_t idx = *n_entries;
        struct mount_entry *grown;
        char what[PATH_MAX + 64];
        int r;

        snprintf(what, sizeof(what), "mount entry %zu (%s at '%s')", idx, plan_kind_name(kind),
                 target ? target : "(null)");
        if (!target || !*target)
                return heal_error_set(err, -EINVAL, "%s: target is empty", what);
        if (target[0] != '/')
                return heal_error_set(err, -EINVAL, "%s: target is not an absolute path", what);
        r = normalize_path(&e.target, target);
        if (r == -ENOMEM)
                return heal_error_set(err, r, "out of memory");
        if (r < 0)
                return heal_error_set(err, r, "%s: target has a '..' component", what);
        if (idx == 0 && !internal &&
            ((kind != HEAL_MOUNT_BIND && kind != HEAL_MOUNT_TMPFS) || strcmp(e.target, "/") != 0))
                return heal_error_set(err, -EINVAL,
                                      "%s: the first entry must be a bind or tmpfs at '/' (the "
                                      "new root); e.g. bind / / ro, or tmpfs /",
                                      what);
        if (idx > 0 && strcmp(e.target, "/") == 0)
                return heal_error_set(err, -EINVAL, "%s: only the first entry may mount '/'", what);
        for (size_t i = 0; i < idx; i++)
                if (strcmp((*entries)[i].target, e.target) == 0)
                        return heal_error_set(err, -EINVAL,
                                              "%s: duplicate target, entry %zu mounts it already",
                                              what, i);
        /* Bind and tmpfs default to nosuid,nodev, like bubblewrap; options may clear them. */
        if (kind == HEAL_MOUNT_BIND || kind == HEAL_MOUNT_TMPFS || kind == HEAL_MOUNT_OVERLAY)
                e.attr_set = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV;
        if (kind == HEAL_MOUNT_PROC)
                e.attr_set = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC;
        r = entry_resolve_source(&e, source, what, err);
        if (r < 0)
                return r;
        r = entry_parse_options(&e, options, what, err);
        if (r < 0)
                return r;
        if (kind == HEAL_MOUNT_DEV)
                e.attr_set |= MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC;
        grown = realloc(*entries, (idx + 1) * sizeof(*grown));
        if (!grown)
                return heal_error_set(err, -ENOMEM, "out of memory");
        *entries = grown;
        grown[idx] = e;
        memset(&e, 0, sizeof(e));
        (*n_entries)++;
        return 0;
}
