/* SPDX-License-Identifier: MIT */
/* heal_gen_extract(): the program in a model's answer, fences in every shape models use. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "heal/gen.h"

#define GO_PROG "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Println(\"hi\")\n}\n"

static heal_gen_code code;
static heal_error err;

static void fini(void)
{
        heal_gen_code_release(&code);
}

TestSuite(extract, .fini = fini);

static int extract(const char *answer, const char *lang)
{
        heal_gen_code_release(&code);
        err = (heal_error)HEAL_ERROR_INIT;
        return heal_gen_extract(&code, answer, strlen(answer), lang, &err);
}

struct shape {
        const char *name, *answer, *tag;
        unsigned block;
};

Test(extract, go_in_every_fence_shape)
{
        static const struct shape shapes[] = {
                { "tagged", "```go\n" GO_PROG "```\n", "go", 1 },
                { "capitalised tag", "```Go\n" GO_PROG "```", "go", 1 },
                { "golang", "Sure!\n\n```golang\n" GO_PROG "```\nThat's it.", "golang", 1 },
                { "untagged", "```\n" GO_PROG "```\n", "", 1 },
                { "space before tag", "``` go\n" GO_PROG "```\n", "go", 1 },
                { "file name as tag", "```main.go\n" GO_PROG "```\n", "main.go", 1 },
                { "tag with attributes", "```go title=\"main.go\"\n" GO_PROG "```\n", "go", 1 },
                { "braces", "```{go}\n" GO_PROG "```\n", "go", 1 },
                { "tildes", "~~~go\n" GO_PROG "~~~\n", "go", 1 },
                { "four backticks", "````go\n" GO_PROG "````\n", "go", 1 },
                { "CRLF",
                  "```go\r\npackage main\r\n\r\nimport \"fmt\"\r\n\r\nfunc main() "
                  "{\r\n\tfmt.Println(\"hi\")\r\n}\r\n```\r\n",
                  "go", 1 },
                { "no closing fence", "Here:\n```go\n" GO_PROG, "go", 1 },
                { "program then how to run it",
                  "```go\n" GO_PROG "```\n\nRun it:\n```bash\ngo run main.go\n```\n", "go", 1 },
                { "output shown first",
                  "It prints:\n```\nhi\n```\nThe code:\n```go\n" GO_PROG "```\n", "go", 2 },
                { "a snippet, then the whole program",
                  "The key line:\n```go\nfmt.Println(\"hi\")\n```\nAll of it:\n```go\n" GO_PROG
                  "```\n",
                  "go", 2 },
        };

        for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
                const struct shape *s = &shapes[i];

                cr_assert_eq(extract(s->answer, "go"), 0, "%s: %s", s->name, err.msg);
                cr_assert_str_eq(code.code, GO_PROG, "%s: got '%s'", s->name, code.code);
                cr_assert_str_eq(code.tag, s->tag, "%s", s->name);
                cr_assert_eq(code.block, s->block, "%s: block %u", s->name, code.block);
                cr_assert(code.complete, "%s", s->name);
                cr_assert_eq(code.closed, strcmp(s->name, "no closing fence") != 0, "%s", s->name);
        }
}

Test(extract, indented_fence_loses_its_indentation)
{
        cr_assert_eq(extract("  ```python\n  print(1)\n    print(2)\n  ```\n", "python3"), 0);
        cr_assert_str_eq(code.code, "print(1)\n  print(2)\n");
}

Test(extract, the_later_of_two_whole_programs_of_equal_length_wins)
{
        cr_assert_eq(extract("```go\n" GO_PROG "```\nor:\n```go\n" GO_PROG "```\n", "go"), 0);
        cr_assert_eq(code.block, 2);
        cr_assert_eq(code.n_blocks, 2);
}

Test(extract, a_complete_program_beats_a_longer_fragment)
{
        const char *a =
                "```go\nfunc helper() {\n\t// a long comment that makes this block "
                "longer than the program itself, much longer\n}\n```\n```go\n" GO_PROG "```\n";

        cr_assert_eq(extract(a, "go"), 0);
        cr_assert_eq(code.block, 2);
}

Test(extract, an_incomplete_program_is_taken_and_flagged)
{
        cr_assert_eq(extract("```go\nfunc main() {}\n```\n", "go"), 0);
        cr_assert_not(code.complete);
        cr_assert_str_eq(code.code, "func main() {}\n");
}

Test(extract, bare_go_without_fences_from_package_to_the_last_brace)
{
        cr_assert_eq(extract("Here is the program:\n" GO_PROG "\nHope that helps!\n", "go"), 0);
        cr_assert_str_eq(code.code, GO_PROG);
        cr_assert_eq(code.block, 0);
        cr_assert(code.complete);
}

Test(extract, bare_c_from_the_first_include)
{
        const char *c = "#include <stdio.h>\nint main(void)\n{\n\tputs(\"hi\");\n}\n";
        char answer[256];

        snprintf(answer, sizeof(answer), "Sure.\n%sDone.\n", c);
        cr_assert_eq(extract(answer, "c"), 0);
        cr_assert_str_eq(code.code, c);
        cr_assert(code.complete);
}

Test(extract, a_bare_script_is_the_whole_answer)
{
        cr_assert_eq(extract("print(6 * 7)\n", "python"), 0);
        cr_assert_str_eq(code.code, "print(6 * 7)\n");
}

Test(extract, a_sentence_is_not_a_script)
{
        cr_assert_eq(extract("I would write a loop that prints the numbers.\n", "python3"),
                     -ENOMSG);
        cr_assert(strstr(err.msg, "no code block"), "%s", err.msg);
        cr_assert_eq(extract("Sure! Here is how it goes: \n\necho hi\n", "sh"), -ENOMSG);
        cr_assert_eq(extract("\nImport this module first.\n", "python3"), -ENOMSG);
        cr_assert_eq(extract("X = 1 + 2\nprint(X)\n", "python3"), 0, "code, not prose");
        cr_assert_eq(extract("Echo hello world.\n", "sh"), -ENOMSG);
}

Test(extract, shell_tags_count_for_sh_and_bash)
{
        cr_assert_eq(extract("```shell\necho hi\n```\n", "sh"), 0);
        cr_assert_str_eq(code.code, "echo hi\n");
        cr_assert_eq(extract("```sh\necho hi\n```\n", "bash"), 0);
        cr_assert_eq(extract("```bash\necho hi\n```\n", "sh"), 0);
}

Test(extract, python_tags)
{
        cr_assert_eq(extract("```py\nprint(1)\n```", "python3"), 0);
        cr_assert_eq(extract("```Python\nprint(1)\n```", "python3"), 0);
        cr_assert_eq(extract("```python3\nprint(1)\n```", "python3"), 0);
        cr_assert_eq(extract("```main.py\nprint(1)\n```", "py"), 0);
}

Test(extract, code_in_another_language_is_refused_by_name)
{
        cr_assert_eq(extract("```python\nprint(1)\n```\n", "go"), -ENOMSG);
        cr_assert(strstr(err.msg, "tagged 'python', not go"), "%s", err.msg);
        cr_assert(strstr(err.msg, "```go"), "%s", err.msg);
        cr_assert_eq(extract("```cpp\nint main() {}\n```\n", "c"), -ENOMSG, "c++ is not c");
}

Test(extract, no_code_at_all)
{
        cr_assert_eq(extract("I cannot help with that.", "go"), -ENOMSG);
        cr_assert(strstr(err.msg, "no code block"), "%s", err.msg);
        cr_assert_eq(extract("", "c"), -ENOMSG);
        cr_assert_eq(extract("```go\n\n   \n```\n", "go"), -ENOMSG);
        cr_assert(strstr(err.msg, "empty"), "%s", err.msg);
        cr_assert_eq(extract("   \n", "python3"), -ENOMSG);
}

Test(extract, inline_triple_backticks_are_not_a_fence)
{
        cr_assert_eq(extract("Use ```go run``` to run.\n```go\n" GO_PROG "```\n", "go"), 0);
        cr_assert_eq(code.n_blocks, 1);
        cr_assert_str_eq(code.code, GO_PROG);
}

Test(extract, a_shorter_fence_does_not_close_a_longer_one)
{
        const char *a = "````markdown\nnot this\n````\n````go\n" GO_PROG "```\nstill go\n````\n";

        cr_assert_eq(extract(a, "go"), 0);
        cr_assert(strstr(code.code, "```\nstill go\n"), "%s", code.code);
}

Test(extract, bad_arguments)
{
        cr_assert_eq(heal_gen_extract(&code, "x", 1, "cobol", &err), -EINVAL);
        cr_assert(strstr(err.msg, "cobol"));
        cr_assert_eq(heal_gen_extract(&code, NULL, 3, "go", &err), -EINVAL);
        cr_assert_eq(heal_gen_extract(NULL, "x", 1, "go", &err), -EINVAL);
        cr_assert_eq(heal_gen_extract(&code, NULL, 0, "go", &err), -ENOMSG);
}

Test(extract, answer_need_not_be_nul_terminated)
{
        char buf[] = { '`', '`', '`', 's', 'h', '\n', 'e', 'c', 'h', 'o', '\n', 'X' };

        cr_assert_eq(heal_gen_extract(&code, buf, sizeof(buf) - 1, "sh", &err), 0);
        cr_assert_str_eq(code.code, "echo\n");
        cr_assert_not(code.closed);
}
