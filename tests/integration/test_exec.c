/* SPDX-License-Identifier: MIT */
/* heal exec: every language from hello to limits, code that breaks shell quoting, stdin and
 * args, the JSON document, the temporary directory, the network. Runs the heal binary. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "heal/runner.h"

#include "harness.h"

struct ran {
        int code; /* heal's exit status, 128+N for a signal */
        char out[1 << 21];
        size_t out_len;
        char err[1 << 16];
        size_t err_len;
        json_t *doc; /* stdout parsed, with --json */
};

static struct ran ran;
static char *dir, *tmp;

static void setup(void)
{
        dir = test_tempdir();
        tmp = test_tempdir(); /* heal's TMPDIR: must be empty after every exec */
}

static void teardown(void)
{
        json_decref(ran.doc);
        ran.doc = NULL;
        test_rmtree(dir);
        test_rmtree(tmp);
        free(dir);
        free(tmp);
}

TestSuite(exec, .init = setup, .fini = teardown, .timeout = 240);

static void drain(int fd, char *buf, size_t *len, size_t cap, bool *open)
{
        ssize_t n = read(fd, buf + *len, cap - 1 - *len);

        if (n <= 0 || *len + (size_t)n >= cap - 1) {
                *open = false;
                if (n > 0)
                        *len += (size_t)n;
        } else {
                *len += (size_t)n;
        }
        buf[*len] = '\0';
}

/* Run heal with @argv (no shell) in @dir, TMPDIR=@tmp, @input on its stdin. */
static void heal_argv(const char *input, const char *const *argv)
{
        int in[2], out[2], err[2], st;
        bool o_open = true, e_open = true;
        pid_t pid;

        cr_assert(pipe(in) == 0 && pipe(out) == 0 && pipe(err) == 0);
        pid = fork();
        cr_assert_geq(pid, 0);
        if (pid == 0) {
                char *v[64] = { (char *)(uintptr_t) "heal", (char *)(uintptr_t) "exec" };
                size_t n = 2;

                for (size_t i = 0; argv[i] && n < 63; i++)
                        v[n++] = (char *)(uintptr_t)argv[i];
                dup2(in[0], 0), dup2(out[1], 1), dup2(err[1], 2);
                close(in[1]), close(out[0]), close(err[0]);
                setenv("TMPDIR", tmp, 1);
                if (chdir(dir) < 0)
                        _exit(126);
                execv(HEAL_TEST_BIN, v);
                _exit(127);
        }
        close(in[0]), close(out[1]), close(err[1]);
        /* heal may exit (a usage error) or never read before this write: no SIGPIPE */
        signal(SIGPIPE, SIG_IGN);
        if (input && write(in[1], input, strlen(input)) != (ssize_t)strlen(input))
                cr_assert_eq(errno, EPIPE, "writing heal's stdin: %s", strerror(errno));
        close(in[1]);
        ran.out_len = ran.err_len = 0;
        while (o_open || e_open) {
                struct pollfd p[2] = { { o_open ? out[0] : -1, POLLIN, 0 },
                                       { e_open ? err[0] : -1, POLLIN, 0 } };

                cr_assert_geq(poll(p, 2, -1), 0);
                if (p[0].revents)
                        drain(out[0], ran.out, &ran.out_len, sizeof(ran.out), &o_open);
                if (p[1].revents)
                        drain(err[0], ran.err, &ran.err_len, sizeof(ran.err), &e_open);
        }
        close(out[0]), close(err[0]);
        cr_assert_eq(waitpid(pid, &st, 0), pid);
        ran.code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

#define HEAL(input, ...) heal_argv(input, (const char *const[]){ __VA_ARGS__, NULL })

static void tmp_is_empty(void)
{
        DIR *d = opendir(tmp);
        struct dirent *de;
        int n = 0;

        cr_assert_not_null(d);
        while ((de = readdir(d)))
                if (de->d_name[0] != '.')
                        n++;
        closedir(d);
        cr_assert_eq(n, 0, "heal exec left its directory behind in %s", tmp);
}

/* heal exec --json ARGS: parsed, with the fields every document has. */
#define HEAL_JSON(input, ...)                                                                     \
 do {                                                                                             \
  json_error_t jerr_;                                                                             \
  json_decref(ran.doc);                                                                           \
  heal_argv(input, (const char *const[]){ "--json", __VA_ARGS__, NULL });                         \
  ran.doc = json_loads(ran.out, 0, &jerr_);                                                       \
  cr_assert_not_null(ran.doc, "invalid JSON (%s): %s\nstderr: %s", jerr_.text, ran.out, ran.err); \
  tmp_is_empty();                                                                                 \
 } while (0)

static const char *status(void)
{
        return json_string_value(json_object_get(ran.doc, "status"));
}

static json_t *stage(const char *name)
{
        return json_object_get(ran.doc, name);
}

static const char *stage_str(const char *name, const char *field)
{
        return json_string_value(json_object_get(stage(name), field));
}

static json_int_t stage_int(const char *name, const char *field)
{
        json_t *v = json_object_get(stage(name), field);

        cr_assert(json_is_integer(v), "%s.%s is not an integer", name, field);
        return json_integer_value(v);
}

#define EXPECT(st)                                                                           \
 cr_assert_str_eq(status(), st, "status %s: %s\nstdout: %.2000s\nstderr: %.2000s", status(), \
                  json_string_value(json_object_get(ran.doc, "message")), ran.out, ran.err)

static const char hello_go[] = "package main\n\nimport \"fmt\"\n\nfunc main() {\n"
                               "\tfmt.Println(\"hello from go\")\n}\n";

Test(exec, hello_each_language)
{
        static const struct {
                const char *file, *code, *lang;
        } cases[] = {
                { "hello.go", hello_go, "go" },
                { "hello.c",
                  "#include <stdio.h>\nint main(void)\n{\n\tputs(\"hello from c\");"
                  "\n\treturn 0;\n}\n",
                  "c" },
                { "hello.py", "print('hello from python3')\n", "python3" },
                { "hello.sh", "echo hello from sh\n", "sh" },
                { "hello.bash", "echo hello from ${BASH_VERSION:+bash}\n", "bash" },
        };
        char want[64];

        test_require("go");
        test_require("cc");
        test_require("python3");
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                test_write_file(dir, cases[i].file, cases[i].code);
                HEAL(NULL, cases[i].file);
                snprintf(want, sizeof(want), "hello from %s\n", cases[i].lang);
                cr_assert_eq(ran.code, 0, "%s: exit %d: %s", cases[i].file, ran.code, ran.err);
                cr_assert_str_eq(ran.out, want);
                cr_assert(strstr(ran.err, "heal: ok ("), "one status line: %s", ran.err);
                tmp_is_empty();
        }
}

Test(exec, code_on_stdin)
{
        HEAL(hello_go, "--lang", "go", "-");
        cr_assert_eq(ran.code, 0, "%s", ran.err);
        cr_assert_str_eq(ran.out, "hello from go\n");
        HEAL("print(6 * 7)\n", "--lang", "python", "-");
        cr_assert_str_eq(ran.out, "42\n");
        HEAL("print(1)\n", "-");
        cr_assert_eq(ran.code, 125, "no --lang for stdin code");
        cr_assert(strstr(ran.err, "--lang"), "%s", ran.err);
}

Test(exec, compile_errors_carry_the_compilers_message)
{
        test_write_file(dir, "bad.go", "package main\n\nfunc main() {\n\tx := 1\n}\n");
        HEAL_JSON(NULL, "bad.go");
        EXPECT("compile_error");
        cr_assert(strstr(stage_str("compile", "stderr"), "bad.go:4:2") &&
                          strstr(stage_str("compile", "stderr"), "declared"),
                  "%s", stage_str("compile", "stderr"));
        cr_assert(json_is_null(stage("run")), "no run stage after a failed build");
        cr_assert_eq(ran.code, 120);

        test_write_file(dir, "bad.c", "int main(void)\n{\n\treturn undeclared_thing;\n}\n");
        HEAL_JSON(NULL, "bad.c");
        EXPECT("compile_error");
        cr_assert(strstr(stage_str("compile", "stderr"), "undeclared_thing"));
        cr_assert_neq(stage_int("compile", "exit_code"), 0);
        HEAL(NULL, "bad.c");
        cr_assert_eq(ran.code, 120);
        cr_assert(strstr(ran.err, "undeclared_thing") && strstr(ran.err, "heal: compile_error"),
                  "human mode shows the compiler's message: %s", ran.err);
}

Test(exec, runtime_errors)
{
        test_write_file(dir, "three.c", "int main(void)\n{\n\treturn 3;\n}\n");
        HEAL_JSON(NULL, "three.c");
        EXPECT("runtime_error");
        cr_assert_eq(stage_int("run", "exit_code"), 3);
        cr_assert(json_is_null(json_object_get(stage("run"), "signal")));
        HEAL(NULL, "three.c");
        cr_assert_eq(ran.code, 3, "the exit code follows the program's");

        test_write_file(dir, "panic.go", "package main\n\nfunc main() {\n\tpanic(\"boom\")\n}\n");
        HEAL_JSON(NULL, "panic.go");
        EXPECT("runtime_error");
        cr_assert_eq(stage_int("run", "exit_code"), 2);
        cr_assert(strstr(stage_str("run", "stderr"), "panic: boom"));

        /* raise(): UBSan or a NULL-store optimisation must not change what the test sees */
        test_write_file(dir, "segv.c",
                        "#include <signal.h>\nint main(void)\n{\n"
                        "\traise(SIGSEGV);\n\treturn 0;\n}\n");
        HEAL_JSON(NULL, "segv.c");
        EXPECT("runtime_error");
        cr_assert_eq(stage_int("run", "signal"), SIGSEGV);
        cr_assert_str_eq(stage_str("run", "signal_name"), "SIGSEGV");
        cr_assert(json_is_null(json_object_get(stage("run"), "exit_code")));
        HEAL(NULL, "segv.c");
        cr_assert_eq(ran.code, 128 + SIGSEGV);

        test_write_file(dir, "div.py", "print('before')\nprint(1 / 0)\n");
        HEAL_JSON(NULL, "div.py");
        EXPECT("runtime_error");
        cr_assert_str_eq(stage_str("run", "stdout"), "before\n");
        cr_assert(strstr(stage_str("run", "stderr"), "ZeroDivisionError"));
}

Test(exec, endless_loop_times_out)
{
        test_write_file(dir, "spin.go", "package main\n\nfunc main() {\n\tfor {\n\t}\n}\n");
        HEAL_JSON(NULL, "--timeout", "1s", "spin.go");
        EXPECT("timeout");
        cr_assert(strstr(json_string_value(json_object_get(ran.doc, "message")), "ms of CPU"));
        cr_assert_lt(stage_int("run", "wall_ms"), 5000);
        HEAL(NULL, "--timeout", "500ms", "spin.go");
        cr_assert_eq(ran.code, 124);
        cr_assert(strstr(ran.err, "heal: timeout"), "%s", ran.err);
}

Test(exec, a_program_that_stops_itself_still_times_out)
{
        test_write_file(dir, "stop.sh", "echo stopping\nkill -STOP $$\necho never\n");
        HEAL_JSON(NULL, "--timeout", "1s", "stop.sh");
        EXPECT("timeout");
        cr_assert_str_eq(stage_str("run", "stdout"), "stopping\n");
        cr_assert(strstr(json_string_value(json_object_get(ran.doc, "message")), "not running"));
        cr_assert_lt(stage_int("run", "wall_ms"), 5000);
}

Test(exec, cpu_time_limit_is_not_a_timeout)
{
        test_write_file(dir, "spin.c",
                        "int main(void)\n{\n\tfor (volatile unsigned long i = 0;; "
                        "i++)\n\t\t;\n}\n");
        HEAL_JSON(NULL, "--cpu-time", "1s", "--timeout", "20s", "spin.c");
        EXPECT("cpu_limit");
        cr_assert_lt(stage_int("run", "wall_ms"), 10000);
        HEAL(NULL, "--cpu-time", "1s", "--timeout", "20s", "spin.c");
        cr_assert_eq(ran.code, 122);
}

/* Touches every page, so the cgroup sees it; without one, malloc fails under RLIMIT_DATA and
 * the program says so, which heal reports as the memory limit too. */
static const char hog_c[] = "#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n"
                            "int main(void)\n{\n\tfor (int i = 0; i < 64; i++) {\n"
                            "\t\tchar *p = malloc(64 << 20);\n\t\tif (!p) {\n"
                            "\t\t\tperror(\"malloc\");\n\t\t\treturn 1;\n\t\t}\n"
                            "\t\tmemset(p, 1, 64 << 20);\n\t}\n\treturn 0;\n}\n";

Test(exec, memory_hog_is_a_memory_limit)
{
        bool mem_cg = false, pids_cg = false;
        char where[512];

        heal_sandbox_probe_enforcement(&mem_cg, &pids_cg, where, sizeof(where));
        test_write_file(dir, "hog.c", hog_c);
        HEAL_JSON(NULL, "--memory", "128M", "hog.c");
        EXPECT("memory_limit");
        if (mem_cg)
                cr_assert(json_array_size(json_object_get(stage("run"), "limits_hit")) > 0);
        HEAL(NULL, "--memory", "128M", "hog.c");
        cr_assert_eq(ran.code, 123);
        test_write_file(dir, "hog.py", "x = bytearray(1 << 30)\nprint(len(x))\n");
        HEAL_JSON(NULL, "--memory", "128M", "hog.py");
        EXPECT("memory_limit");
}

Test(exec, output_flood_is_cut)
{
        test_write_file(dir, "flood.py", "while True:\n    print('y' * 100)\n");
        HEAL_JSON(NULL, "flood.py");
        EXPECT("output_limit");
        cr_assert(json_is_true(json_object_get(stage("run"), "stdout_truncated")));
        cr_assert_leq(strlen(stage_str("run", "stdout")), 1 << 20, "the default cap is 1 MiB");
        cr_assert_gt(strlen(stage_str("run", "stdout")), 1 << 19);
        HEAL(NULL, "--output-limit", "10K", "flood.py");
        cr_assert_eq(ran.code, 121);
        cr_assert_leq(ran.out_len, 10240);
}

/* What breaks "echo '" + code + "' > main.go": it must reach the interpreter byte for byte. */
Test(exec, code_that_breaks_shell_quoting_runs_verbatim)
{
        static const char py[] =
                "s = r'''it's \"quoted\" \\ back\\slash `id` $(id) $HOME ${x} '\\''\n"
                "!history; rm -rf / #'''\nprint(s)\n";
        static const char want[] = "it's \"quoted\" \\ back\\slash `id` $(id) $HOME ${x} '\\''\n"
                                   "!history; rm -rf / #\n";
        static const char go[] = "package main\n\nimport \"fmt\"\n\nfunc main() {\n"
                                 "\tfmt.Print(`it's $(id) \\n ` + \"'\\\\\" + \"\\n\")\n}\n";

        test_write_file(dir, "quotes.py", py);
        HEAL(NULL, "quotes.py");
        cr_assert_eq(ran.code, 0, "%s", ran.err);
        cr_assert_str_eq(ran.out, want);
        HEAL(go, "--lang", "go", "-");
        cr_assert_eq(ran.code, 0, "%s", ran.err);
        cr_assert_str_eq(ran.out, "it's $(id) \\n '\\\n");
}

Test(exec, stdin_and_args_reach_the_program)
{
        test_write_file(dir, "echo.py",
                        "import sys\nprint(sys.argv[1:])\n"
                        "print(sys.stdin.read().upper(), end='')\n");
        test_write_file(dir, "input.txt", "line one\nline two\n");
        HEAL(NULL, "--stdin", "input.txt", "echo.py", "--", "a", "b c", "$(id)", "--json");
        cr_assert_eq(ran.code, 0, "%s", ran.err);
        cr_assert_str_eq(ran.out, "['a', 'b c', '$(id)', '--json']\nLINE ONE\nLINE TWO\n");
        HEAL("from heal's stdin\n", "--stdin", "-", "echo.py");
        cr_assert_str_eq(ran.out, "[]\nFROM HEAL'S STDIN\n");
        HEAL("ignored\n", "echo.py");
        cr_assert_str_eq(ran.out, "[]\n", "stdin is /dev/null unless --stdin");

        test_write_file(dir, "args.go",
                        "package main\n\nimport (\n\t\"fmt\"\n\t\"io\"\n\t\"os\""
                        "\n)\n\nfunc main() {\n\tb, _ := io.ReadAll(os.Stdin)\n"
                        "\tfmt.Printf(\"%q %s\", os.Args[1:], b)\n}\n");
        HEAL(NULL, "--stdin", "input.txt", "args.go", "--", "x y");
        cr_assert_eq(ran.code, 0, "%s", ran.err);
        cr_assert_str_eq(ran.out, "[\"x y\"] line one\nline two\n");
}

Test(exec, json_document_has_the_documented_fields)
{
        static const char *const stage_fields[] = {
                "status",       "stdout",     "stderr",      "stdout_truncated", "stderr_truncated",
                "exit_code",    "signal",     "signal_name", "wall_ms",          "cpu_ms",
                "memory_bytes", "limits_hit", "enforcement", "message",          "processes",
        };

        test_write_file(dir, "main.c",
                        "#include <stdio.h>\nint main(void)\n{\n"
                        "\tprintf(\"a\\377b\");\n\tfprintf(stderr, \"e\\n\");"
                        "\n\treturn 0;\n}\n");
        HEAL_JSON(NULL, "main.c");
        EXPECT("ok");
        cr_assert_str_eq(json_string_value(json_object_get(ran.doc, "language")), "c");
        cr_assert_str_eq(json_string_value(json_object_get(ran.doc, "message")), "");
        for (size_t i = 0; i < sizeof(stage_fields) / sizeof(stage_fields[0]); i++) {
                cr_assert_not_null(json_object_get(stage("compile"), stage_fields[i]), "compile.%s",
                                   stage_fields[i]);
                cr_assert_not_null(json_object_get(stage("run"), stage_fields[i]), "run.%s",
                                   stage_fields[i]);
        }
        cr_assert_str_eq(stage_str("run", "stdout"), "a\xEF\xBF\xBD"
                                                     "b");
        cr_assert_str_eq(stage_str("run", "stderr"), "e\n");
        cr_assert_str_eq(stage_str("run", "status"), "ok");
        cr_assert_eq(stage_int("run", "exit_code"), 0);
        cr_assert_gt(stage_int("run", "memory_bytes"), 0);
        cr_assert(json_is_boolean(json_object_get(stage("run"), "stdout_truncated")));

        test_write_file(dir, "x.py", "print('no compile stage')\n");
        HEAL_JSON(NULL, "x.py");
        cr_assert(json_is_null(stage("compile")));
        cr_assert_str_eq(stage_str("run", "stdout"), "no compile stage\n");
}

Test(exec, directory_of_files)
{
        char sub[512];

        snprintf(sub, sizeof(sub), "%s/prog", dir);
        cr_assert_eq(mkdir(sub, 0755), 0);
        test_write_file(sub, "main.py", "import helper\nhelper.hi()\n");
        test_write_file(sub, "helper.py", "def hi():\n    print('hi from helper')\n");
        HEAL(NULL, "prog");
        cr_assert_eq(ran.code, 0, "%s", ran.err);
        cr_assert_str_eq(ran.out, "hi from helper\n");

        test_rmtree(sub);
        cr_assert_eq(mkdir(sub, 0755), 0);
        test_write_file(sub, "go.mod", "module example.com/two\n\ngo 1.19\n");
        test_write_file(sub, "a.go", "package main\n\nfunc main() {\n\tprintln(msg())\n}\n");
        test_write_file(sub, "b.go",
                        "package main\n\nfunc msg() string {\n\treturn \"two files\""
                        "\n}\n");
        HEAL(NULL, "prog");
        cr_assert_eq(ran.code, 0, "%s", ran.err);
        cr_assert(strstr(ran.err, "two files"), "%s", ran.err);
        HEAL(NULL, "prog/a.go", "prog/b.go");
        cr_assert_eq(ran.code, 0, "files given one by one: %s", ran.err);
}

Test(exec, no_network_and_no_host_writes)
{
        test_write_file(dir, "net.py",
                        "import socket\ntry:\n    socket.create_connection(('1.1.1.1', 53), "
                        "timeout=3)\n    print('connected')\nexcept OSError as e:\n"
                        "    print('no network')\nopen('written.txt', 'w').write('x')\n"
                        "print(open('written.txt').read())\n");
        HEAL(NULL, "net.py");
        cr_assert_eq(ran.code, 0, "%s", ran.err);
        cr_assert_str_eq(ran.out, "no network\nx\n", "writes work inside, the net does not");
        tmp_is_empty();
}

Test(exec, usage_errors_name_the_fix)
{
        HEAL(NULL, "--help");
        cr_assert_eq(ran.code, 0);
        cr_assert(strstr(ran.out, "heal exec [options] FILE...") && strstr(ran.out, "exit status"));
        HEAL(NULL, "");
        cr_assert_eq(ran.code, 125);
        HEAL(NULL, "--lang", "cobol", "x");
        cr_assert_eq(ran.code, 125);
        cr_assert(strstr(ran.err, "go, c, python3, sh, bash"), "%s", ran.err);
        test_write_file(dir, "notes.txt", "hello\n");
        HEAL(NULL, "notes.txt");
        cr_assert_eq(ran.code, 125);
        cr_assert(strstr(ran.err, "--lang"), "%s", ran.err);
        HEAL(NULL, "--timeout", "soon", "notes.txt");
        cr_assert_eq(ran.code, 125);
        cr_assert(strstr(ran.err, "500ms"), "%s", ran.err);
        HEAL(NULL, "missing.py");
        cr_assert_eq(ran.code, 125);
        cr_assert(strstr(ran.err, "missing.py"), "%s", ran.err);
        HEAL(NULL, "--lang", "sh", "notes.txt");
        cr_assert_eq(ran.code, 127, "sh runs notes.txt, whose 'hello' is not a command");
}

/* The library itself: names that would leave the directory, duplicates, unknown languages,
 * stdin as bytes, and a canceled runner. */
Test(exec, library_checks_files_and_cancels)
{
        static const char *const bad[] = { "../x.py", "/etc/x.py", "a/../x.py", "",
                                           "a//b.py", "./x.py",    "dir/" };
        heal_runner_file f = { .name = "x.py", .data = "import sys\nprint(sys.stdin.read())\n" };
        heal_runner_opts o = HEAL_RUNNER_OPTS_INIT;
        heal_runner_result res = { 0 };
        heal_error err = HEAL_ERROR_INIT;
        heal_runner *rn = NULL;

        cr_assert_eq(setenv("TMPDIR", tmp, 1), 0);
        cr_assert_eq(heal_runner_new(&rn, &err), 0, "%s", err.msg);
        f.len = strlen(f.data);
        o.files = &f;
        o.n_files = 1;
        o.stdin_data = "bytes in";
        o.stdin_len = 8;
        cr_assert_eq(heal_runner_exec(&res, rn, &o, &err), 0, "%s", err.msg);
        cr_assert_eq(res.status, HEAL_EXEC_OK, "%s", res.message);
        cr_assert_str_eq(res.run.res.out, "bytes in\n");
        cr_assert_not(res.compile.ran);
        heal_runner_result_release(&res);
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                heal_runner_file b = { .name = bad[i], .data = "print(1)\n", .len = 9 };

                o.files = &b;
                o.lang = "python3";
                cr_assert_eq(heal_runner_exec(&res, rn, &o, &err), -EINVAL, "'%s' accepted",
                             bad[i]);
        }
        heal_runner_file two[] = { f, f };
        o.files = two;
        o.n_files = 2;
        cr_assert_eq(heal_runner_exec(&res, rn, &o, &err), -EINVAL, "a duplicate name");
        cr_assert(strstr(err.msg, "twice"), "%s", err.msg);
        o.n_files = 1;
        o.lang = "cobol";
        cr_assert_eq(heal_runner_exec(&res, rn, &o, &err), -EINVAL);
        tmp_is_empty();
        o.lang = NULL;
        heal_runner_cancel(rn);
        cr_assert_eq(heal_runner_exec(&res, rn, &o, &err), 0);
        cr_assert_eq(res.status, HEAL_EXEC_CANCELED);
        cr_assert_str_eq(heal_exec_status_to_string(res.status), "canceled");
        heal_runner_result_release(&res);
        heal_runner_free(rn);
}

Test(exec, the_directories_of_a_killed_heal_are_removed_at_the_next_start)
{
        char dead[PATH_MAX], live[PATH_MAX], old[PATH_MAX], deep[1100] = "";
        pid_t pid = fork();
        struct stat st;

        cr_assert_geq(pid, 0);
        if (pid == 0)
                _exit(0);
        waitpid(pid, NULL, 0); /* a PID that no process has now */
        snprintf(dead, sizeof(dead), "%s/heal-exec-%d-aaaaaa", tmp, (int)pid);
        snprintf(live, sizeof(live), "%s/heal-exec-%d-bbbbbb", tmp, (int)getpid());
        snprintf(old, sizeof(old), "%s/heal-exec-cccccc", tmp);
        cr_assert_eq(mkdir(dead, 0700), 0);
        test_write_file(dead, "main.py", "print(1)\n");
        cr_assert_eq(mkdir(live, 0700), 0);
        cr_assert_eq(mkdir(old, 0700), 0);
        {
                /* an hour old: a new one might be another PID namespace's */
                struct timespec t[2] = { { time(NULL) - 3600, 0 }, { time(NULL) - 3600, 0 } };

                cr_assert_eq(utimensat(AT_FDCWD, dead, t, 0), 0);
                cr_assert_eq(utimensat(AT_FDCWD, live, t, 0), 0);
        }
        test_write_file(dir, "hi.py", "print('hi')\n");
        HEAL(NULL, "hi.py");
        cr_assert_eq(ran.code, 0, "%s", ran.err);
        cr_assert_neq(stat(dead, &st), 0, "%s was left", dead);
        cr_assert_eq(stat(live, &st), 0, "a running process's directory stays");
        cr_assert_eq(stat(old, &st), 0, "a name without a PID is not heal's to judge");
        /* and names too deep to remove are refused in the first place */
        for (int i = 0; i < 33; i++)
                strcat(deep, "d/");
        strcat(deep, "x.py");
        {
                heal_runner_file f[] = { { "main.py", "print(1)\n", 9 }, { deep, "", 0 } };
                heal_runner_opts o = HEAL_RUNNER_OPTS_INIT;
                heal_runner_result res = { 0 };
                heal_error err = HEAL_ERROR_INIT;
                heal_runner *rn = NULL;

                cr_assert_eq(heal_runner_new(&rn, &err), 0, "%s", err.msg);
                o.files = f;
                o.n_files = 2;
                cr_assert_eq(heal_runner_exec(&res, rn, &o, &err), -EINVAL);
                cr_assert(strstr(err.msg, "at most 32 deep"), "%s", err.msg);
                heal_runner_free(rn);
        }
        rmdir(live);
        rmdir(old);
}
