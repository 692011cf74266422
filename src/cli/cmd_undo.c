/* SPDX-License-Identifier: MIT */
/* heal undo: put back the files a write-back changed (library: include/heal/writeback.h). */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "heal/writeback.h"

#include "cli/cli.h"
#include "core/util.h"

static const char usage[] =
        "usage: heal undo [--list] [--force] [--dry-run] [--json] [--tree DIR] [ID]\n"
        "\n"
        "Puts back the files heal wrote into your tree when it applied a verified fix: each\n"
        "file gets its original content and mode again, files heal created are removed, and so\n"
        "are the directories it made for them when they are empty. Without ID, the latest\n"
        "write-back not undone yet; run it again to go further back.\n"
        "\n"
        "Before writing a fix, heal saves the originals and a manifest (command, files, sizes,\n"
        "XXH3 hashes before and after) in .heal/undo/ID/ at the top of the tree; .heal/ holds a\n"
        ".gitignore, so git does not see it. An entry undone is renamed ID.undone and kept.\n"
        "\n"
        "A file changed since heal wrote it is not restored, and then nothing is: your edits\n"
        "would be lost. --force restores it anyway. A file already back to its original is left\n"
        "alone, so an undo that was cut short can simply be run again.\n"
        "\n"
        "  --list       list the write-backs, oldest first: id, time, command, files, undone\n"
        "  --force      also restore files changed since heal wrote them (their changes are\n"
        "               lost)\n"
        "  --dry-run    check everything and say what would be restored; change nothing\n"
        "  --json       machine output on stdout: {\"id\", \"dry_run\", \"files\", \"forced\"};\n"
        "               with --list {\"entries\": [{\"id\", \"time\", \"command\", \"files\",\n"
        "               \"undone\"}]}\n"
        "  --tree DIR   the tree (default: the nearest directory, from the current one\n"
        "               upwards, that has .heal/undo)\n"
        "\n"
        "Exit status: 0 restored (or listed); 1 nothing to undo, or a file changed since heal\n"
        "wrote it (nothing restored); 2 usage error; 3 any other failure (the message says\n"
        "which files, if any, were left changed).\n"
        "\n"
        "docs: docs/writeback.md\n";

struct undo_cli {
        heal_undo_opts o;
        bool list, json;
        char tree[PATH_MAX];
};

/* The nearest directory from the current one upwards with .heal/undo; else the current one. */
static int find_tree(char *tree, size_t len)
{
        char cwd[PATH_MAX], probe[PATH_MAX + 16];
        struct stat st;

        if (!getcwd(cwd, sizeof(cwd)))
                return -errno;
        for (char *end = cwd + strlen(cwd);;) {
                (void)str_printf(probe, sizeof(probe), "%.*s/.heal/undo", (int)(end - cwd), cwd);
                if (stat(probe, &st) == 0 && S_ISDIR(st.st_mode))
                        return str_printf(tree, len, "%.*s", end > cwd ? (int)(end - cwd) : 1, cwd);
                if (end == cwd)
                        break;
                while (end > cwd && *--end != '/')
                        ;
        }
        return str_printf(tree, len, "%s", cwd);
}

static int parse(struct undo_cli *c, int argc, char **argv)
{
        for (int i = 1; i < argc; i++) {
                const char *a = argv[i];

                if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
                        fputs(usage, stdout);
                        return 1;
                } else if (!strcmp(a, "--list")) {
                        c->list = true;
                } else if (!strcmp(a, "--force")) {
                        c->o.force = true;
                } else if (!strcmp(a, "--dry-run")) {
                        c->o.dry_run = true;
                } else if (!strcmp(a, "--json")) {
                        c->json = true;
                } else if (!strcmp(a, "--tree") || !strncmp(a, "--tree=", 7)) {
                        const char *v = a[6] == '=' ? a + 7 : i + 1 < argc ? argv[++i] : NULL;

                        if (!v || !v[0] || !realpath(v, c->tree)) {
                                log_error("undo: --tree needs an existing directory");
                                return -1;
                        }
                } else if (a[0] == '-' || c->o.id) {
                        log_error("undo: unexpected '%s'; see 'heal undo --help'", a);
                        return -1;
                } else {
                        c->o.id = a;
                }
        }
        if (c->list && (c->o.id || c->o.force || c->o.dry_run)) {
                log_error("undo: --list takes no ID, --force or --dry-run");
                return -1;
        }
        if (!c->tree[0] && find_tree(c->tree, sizeof(c->tree)) < 0) {
                log_error("undo: the current directory cannot be found; use --tree DIR");
                return -1;
        }
        c->o.tree = c->tree;
        return 0;
}

static json_t *paths_json(char *const *v, size_t n)
{
        json_t *a = json_array();

        for (size_t i = 0; i < n; i++)
                json_array_append_new(a, json_string_bytes(v[i], strlen(v[i])));
        return a;
}

static int list(const struct undo_cli *c)
{
        heal_error err = HEAL_ERROR_INIT;
        heal_undo_entries l = { 0 };
        json_t *a = json_array();

        if (heal_undo_list(&l, &c->o, &err) < 0) {
                json_decref(a);
                log_error("undo: %s", err.msg);
                return 3;
        }
        for (size_t i = 0; i < l.n; i++) {
                const heal_undo_entry *e = &l.v[i];

                if (c->json) {
                        json_array_append_new(
                                a, json_pack("{s:s, s:s, s:o, s:o, s:b}", "id", e->id, "time",
                                             e->time, "command",
                                             e->command ? json_string_bytes(e->command,
                                                                            strlen(e->command))
                                                        : json_null(),
                                             "files", paths_json(e->files, e->n_files), "undone",
                                             e->undone));
                        continue;
                }
                printf("%s  %s  %s%s\n", e->id, e->time, e->undone ? "(undone) " : "",
                       e->command ? e->command : "");
                for (size_t k = 0; k < e->n_files; k++)
                        printf("    %s\n", e->files[k]);
        }
        if (c->json)
                json_print(json_pack("{s:o}", "entries", a));
        else if (!l.n)
                printf("no write-back recorded under '%s'\n", c->tree);
        if (!c->json)
                json_decref(a);
        heal_undo_entries_release(&l);
        return 0;
}

int cmd_undo(int argc, char **argv)
{
        struct undo_cli c = { .o = { 0 } };
        heal_error err = HEAL_ERROR_INIT;
        heal_undo_result res = { 0 };
        int r;

        r = parse(&c, argc, argv);
        if (r != 0)
                return r > 0 ? 0 : EXIT_USAGE;
        if (c.list)
                return list(&c);
        r = heal_undo(&res, &c.o, &err);
        if (r < 0) {
                log_error("undo: %s", err.msg);
                return r == -EINVAL ? EXIT_USAGE : r == -ENOENT || r == -ESTALE ? 1 : 3;
        }
        if (c.json) {
                json_print(json_pack("{s:s, s:b, s:o, s:I}", "id", res.id, "dry_run", c.o.dry_run,
                                     "files", paths_json(res.files, res.n_files), "forced",
                                     (json_int_t)res.n_forced));
        } else {
                printf("%s %zu file%s of %s%s\n", c.o.dry_run ? "would restore" : "restored",
                       res.n_files, res.n_files == 1 ? "" : "s", res.id,
                       res.n_files ? ":" : " (all were back to their originals already)");
                for (size_t i = 0; i < res.n_files; i++)
                        printf("  %s\n", res.files[i]);
                if (res.n_forced)
                        printf("%zu of them had changed since heal wrote them (--force)\n",
                               res.n_forced);
        }
        heal_undo_result_release(&res);
        return 0;
}
