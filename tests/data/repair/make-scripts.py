#!/usr/bin/env python3
"""Regenerate the scripted model answers (tests/data/repair/*.json) for the bundled corpus of
failing programs (tests/data/broken/*) and the impossible cases (tests/data/repair/impossible/*).

usage: python3 tests/data/repair/make-scripts.py        (writes the scripts next to this file)

Each script is read by tests/helpers/fake-model.py: a list of rules {when, unless, answers}; the
first rule whose "when" texts all occur in the last user message (and none of its "unless" texts)
answers, and a request's n answers cycle through "answers". The prompt heal sends:
  - for the root (the original failure): the failure only;
  - when a node is expanded again: a section "## Attempts that did not work";
  - for a child node (after a first edit): a section "## Edits already made".
So a script lists the child rules first (they name the child's new error), then the root's second
asking ("Attempts that did not work", no "Edits already made"), then the root's first batch.

Every case's first batch holds a wrong-but-plausible fix, one whose SEARCH text does not match
the file, and (for test and panic cases) one that games the check; the right fix (the cause fixed
as in the case's fix.diff) comes on re-expansion or as a chained fix in a child's prompt. See
README.md for the table of cases and what heal is expected to print.
"""
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))

ATTEMPTS = "Attempts that did not work"
EDITS = "Edits already made"


def sr(path, search, replace, why=""):
    """One search/replace block (search and replace are lists of lines or strings)."""
    if isinstance(search, (list, tuple)):
        search = "\n".join(search)
    if isinstance(replace, (list, tuple)):
        replace = "\n".join(replace)
    search = search.rstrip("\n")
    replace = replace.rstrip("\n")
    text = (why + "\n\n") if why else ""
    if not replace:  # delete the lines
        return text + f"{path}\n<<<<<<< SEARCH\n{search}\n=======\n>>>>>>> REPLACE\n"
    if search:
        return text + f"{path}\n<<<<<<< SEARCH\n{search}\n=======\n{replace}\n>>>>>>> REPLACE\n"
    return text + f"{path}\n<<<<<<< SEARCH\n=======\n{replace}\n>>>>>>> REPLACE\n"


def blocks(why, *bs):
    """Several blocks in one answer: bs are (path, search, replace)."""
    return why + "\n\n" + "\n".join(sr(p, s, r) for p, s, r in bs)


def rule(when, answers, unless=()):
    r = {"when": list(when)}
    if unless:
        r["unless"] = list(unless)
    r["answers"] = list(answers)
    return r


def root_rules(key, first, again):
    """The root's first batch and its second asking (after attempts failed)."""
    return [
        rule([ATTEMPTS, key], again, unless=[EDITS]),
        rule([key], first, unless=[EDITS, ATTEMPTS]),
    ]


CASES = {}

# --- 01: := inside both branches (loop case: A -> B -> A is pruned, then the right fix) -----
F = "main.go"
DECL_BOTH = ["\tif len(spec.ReplicaTags) == 0 {",
             "\t\tresult, err := createTable(spec, \"default\")",
             "\t} else {",
             "\t\tresult, err := createTable(spec, spec.ReplicaTags[0])",
             "\t}"]
ASSIGN_BOTH = ["\tif len(spec.ReplicaTags) == 0 {",
               "\t\tresult, err = createTable(spec, \"default\")",
               "\t} else {",
               "\t\tresult, err = createTable(spec, spec.ReplicaTags[0])",
               "\t}"]
CASES["01-compile-if-scope-err"] = [
    # node B (after A): the model declares err but drops result: back to A ("undefined: result")
    # would be a loop; here: B's failure is "undefined: err" -> its 'fix' swaps which one is
    # declared, bringing back A's failure -> pruned (loop); asked again it declares both.
    rule([EDITS, "undefined: err", ATTEMPTS],
         [sr(F, "\tvar result string", "\tvar (\n\t\tresult string\n\t\terr    error\n\t)",
             "Both variables must be declared once, before the if, so the branches assign them.")]),
    rule([EDITS, "undefined: err"],
         [sr(F, "\tvar result string", "\tvar err error",
             "err is the one used after the if: declare err before it.")]),
    rule([EDITS, "undefined: result", ATTEMPTS],
         [sr(F, "\tvar err error", "\tvar (\n\t\tresult string\n\t\terr    error\n\t)",
             "Both variables must be declared once, before the if, so the branches assign them.")]),
    rule([EDITS, "undefined: result"],
         [sr(F, "\tvar err error", "\tvar result string",
             "result is printed after the if: declare result before it.")]),
] + root_rules(
    "declared but not used",
    first=[
        sr(F, DECL_BOTH, ["\tvar err error"] + ASSIGN_BOTH,
           "The branches declare new variables with :=; assign instead, and declare err before the if."),
        sr(F, [l.replace('"default"', "defaultReplica") for l in DECL_BOTH], ["\tvar result string", "\tvar err error"] + ASSIGN_BOTH,
           "Declare result and err once, before the if, and assign in the branches."),
        sr(F, DECL_BOTH, ["\tif len(spec.ReplicaTags) == 0 {",
                          "\t\t_, _ = createTable(spec, \"default\")",
                          "\t} else {",
                          "\t\t_, _ = createTable(spec, spec.ReplicaTags[0])",
                          "\t}"],
           "The results are not used: discard them."),
    ],
    again=[sr(F, DECL_BOTH, ["\tvar (", "\t\tresult string", "\t\terr    error", "\t)"] + ASSIGN_BOTH,
              "The := in each branch declares branch-local variables; declare them once before the if.")],
)

# --- 02: int * time.Millisecond --------------------------------------------------------------
F = "backoff.go"
CASES["02-compile-duration-int"] = [
    rule([EDITS, "Delay(0) = 250ns"],
         [sr(F, "\tbase := time.Duration(c.BackoffMillis)",
             "\tbase := time.Duration(c.BackoffMillis) * time.Millisecond",
             "The conversion dropped the unit: BackoffMillis is in milliseconds.")]),
] + root_rules(
    "mismatched types int and time.Duration",
    first=[
        sr(F, "\tbase := c.BackoffMillis * time.Millisecond", "\tbase := time.Duration(c.BackoffMillis)",
           "Convert the int to a time.Duration."),
        sr(F, "\tbase := c.BackoffMillis * time.Milliseconds", "\tbase := time.Duration(c.BackoffMillis) * time.Millisecond",
           "Convert before multiplying by the unit."),
        sr("backoff_test.go", "\t\t{0, 250 * time.Millisecond},", "\t\t{0, 250},",
           "The test expects the wrong unit."),
    ],
    again=[sr(F, "\tbase := c.BackoffMillis * time.Millisecond",
              "\tbase := time.Duration(c.BackoffMillis) * time.Millisecond",
              "Go has no implicit int -> time.Duration conversion: convert the count, then scale by the unit.")],
)

# --- 04: helper that always panics is not a terminating statement ------------------------------
F = "level.go"
CASES["04-compile-missing-return-helper"] = [
    rule([EDITS, "did not panic"],
         [sr(F, "\treturn 0\n}", "\tpanic(fmt.Sprintf(\"unknown log level %q\", name))\n}",
             "Unknown levels must abort: panic directly, which also terminates the function.")]),
] + root_rules(
    "missing return",
    first=[
        sr(F, "\tthrow(\"unknown log level %q\", name)", "\treturn 0",
           "Return a default level for unknown names."),
        sr(F, "\tthrow(\"unknown level %q\", name)", "\tpanic(fmt.Sprintf(\"unknown log level %q\", name))",
           "Use panic, a terminating statement."),
        sr(F, "\tthrow(\"unknown log level %q\", name)", "\tthrow(\"unknown log level %q\", name)\n\treturn",
           "Add the missing return."),
    ],
    again=[sr(F, "\tthrow(\"unknown log level %q\", name)", "\tpanic(fmt.Sprintf(\"unknown log level %q\", name))",
              "A call to a helper that panics is not a terminating statement; call panic directly.")],
)

# --- 06: type parameter used as map key needs comparable ---------------------------------------
F = "set.go"
CASES["06-compile-generic-map-key"] = [
    rule([EDITS, "K does not implement comparable"],
         [sr(F, "func NewSet[K any](keys ...K) *Set[K] {", "func NewSet[K comparable](keys ...K) *Set[K] {",
             "NewSet must carry the same constraint as Set.")]),
] + root_rules(
    "missing comparable constraint",
    first=[
        sr(F, "type Set[K any] struct {", "type Set[K comparable] struct {",
           "Map keys must be comparable."),
        sr(F, "type Set[K any] struct{", "type Set[K comparable] struct{", "Map keys must be comparable."),
        sr(F, "func NewSet[K any](keys ...K) *Set[K] {", "func NewSet[K comparable](keys ...K) *Set[K] {",
           "The map is made in NewSet: constrain K there."),
    ],
    again=[blocks("K is a map key: constrain it by comparable in both places.",
                  (F, "type Set[K any] struct {", "type Set[K comparable] struct {"),
                  (F, "func NewSet[K any](keys ...K) *Set[K] {", "func NewSet[K comparable](keys ...K) *Set[K] {"))],
)

# --- 08: variable only assigned inside a goroutine ---------------------------------------------
F = "main.go"
CASES["08-compile-closure-unused-var"] = [
    rule([EDITS, "undefined: previousNote"],
         [sr(F, "\t\t\tpreviousNote = e\n", "",
             "previousNote is never read: drop the assignment too.")]),
] + root_rules(
    "previousNote declared but not used",
    first=[
        sr(F, "\tpreviousNote := note{Name: \"C\", Octave: 4}\n", "",
           "previousNote is never read: remove it."),
        sr(F, "\tpreviousNote := note{Name: \"C\", Octave: 4 }", "", "Remove the unused variable."),
        sr(F, "\t\t\tpreviousNote = e", "\t\t\tpreviousNote := e",
           "Declare it where it is set."),
    ],
    again=[blocks("previousNote is written but never read: remove the variable and its assignment.",
                  (F, "\tpreviousNote := note{Name: \"C\", Octave: 4}\n", ""),
                  (F, "\t\t\tpreviousNote = e\n", ""))],
)

# --- 10: import cycle (second loop case) --------------------------------------------------------
T = "teacher/teacher.go"
S = "student/student.go"
T_IMPORTS = "import (\n\t\"fmt\"\n\n\t\"example/student\"\n)"
ASK = ["func (t *Teacher) Ask(s *student.Student, q string) string {",
       "\treturn fmt.Sprintf(\"%s asks %s: %s -> %s\", t.Name, s.Name, q, s.Answer(q))",
       "}"]
ASK_IFACE = ["func (t *Teacher) Ask(s interface{ Answer(string) string }, q string) string {",
             "\treturn fmt.Sprintf(\"%s asks %s: %s -> %s\", t.Name, s.Name, q, s.Answer(q))",
             "}"]
ASK_IFACE_NAME = ["func (t *Teacher) Ask(s interface {", "\tAnswer(string) string", "\tName() string",
                  "}, q string) string {",
                  "\treturn fmt.Sprintf(\"%s asks %s: %s -> %s\", t.Name, s.Name(), q, s.Answer(q))",
                  "}"]
ANSWERER = ["// Answerer is anyone who can answer a question and has a name. Declaring it",
            "// here (where it is used) removes the need to import package student.",
            "type Answerer interface {", "\tAnswer(q string) string", "\tDisplayName() string", "}", "",
            "type Teacher struct {"]
ASK_RIGHT = ["func (t *Teacher) Ask(s Answerer, q string) string {",
             "\treturn fmt.Sprintf(\"%s asks %s: %s -> %s\", t.Name, s.DisplayName(), q, s.Answer(q))",
             "}"]
DISPLAY = ["// DisplayName lets a Student be used as a teacher.Answerer.",
           "func (s *Student) DisplayName() string { return s.Name }", "",
           "// AskTeacher lets a student ask the teacher."]
RIGHT_ON_TOP = lambda ask_now: blocks(  # noqa: E731
    "Declare the interface teacher needs on its side, with a method for the name, and let "
    "Student implement it: teacher no longer imports student.",
    (T, "type Teacher struct {", "\n".join(ANSWERER)),
    (T, "\n".join(ask_now), "\n".join(ASK_RIGHT)),
    (S, "// AskTeacher lets a student ask the teacher.", "\n".join(DISPLAY)))
CASES["10-compile-import-cycle"] = [
    # B: the interface asks for Name(), which Student (a field Name) does not have.
    # B's 'fix' drops Name() again -> A's failure (s.Name undefined) -> pruned (loop).
    # (the attempts section repeats sibling failures, so the node's own source picks the rule)
    rule([EDITS, ATTEMPTS, "Ask(s interface{ Answer(string) string }, q string)"], [RIGHT_ON_TOP(ASK_IFACE)]),
    rule([EDITS, "missing method Name", ATTEMPTS], [RIGHT_ON_TOP(ASK_IFACE_NAME)]),
    rule([EDITS, "missing method Name"],
         [sr(T, "\n".join(ASK_IFACE_NAME), "\n".join(ASK_IFACE).replace("q string) string {", "q string) string { // s only needs to answer", 1),
             "*student.Student has no Name method; the interface should only ask for Answer.")]),
    # A: teacher takes an interface without a name.
    rule([EDITS, "s.Name undefined", ATTEMPTS], [RIGHT_ON_TOP(ASK_IFACE)]),
    rule([EDITS, "s.Name undefined"],
         [sr(T, "\n".join(ASK_IFACE), "\n".join(ASK_IFACE_NAME),
             "The interface needs the name too: add a Name() method to it.")]),
] + root_rules(
    "import cycle not allowed",
    first=[
        sr(T, T_IMPORTS + "\n\ntype Teacher struct {\n\tName string\n}\n\n// Ask puts a question to a student and returns the exchange.\n" + "\n".join(ASK),
           "import \"fmt\"\n\ntype Teacher struct {\n\tName string\n}\n\n// Ask puts a question to a student and returns the exchange.\n" + "\n".join(ASK_IFACE),
           "teacher must not import student: take an interface instead."),
        sr(T, T_IMPORTS.replace("example/student", "example/students"), "import \"fmt\"",
           "Remove the import of student from teacher."),
        sr("main.go", "import (\n\t\"fmt\"\n\n\t\"example/student\"\n\t\"example/teacher\"\n)",
           "import (\n\t\"fmt\"\n\n\t\"example/teacher\"\n\t\"example/student\"\n)",
           "Import teacher before student so that it is initialised first."),
    ],
    again=[blocks("Declare the interface teacher needs on its side (Answer and a display name) and "
                  "let Student implement it; teacher then no longer imports student.",
                  (T, T_IMPORTS, "import \"fmt\""),
                  (T, "type Teacher struct {", "\n".join(ANSWERER)),
                  (T, "\n".join(ASK).replace("s *student.Student", "s student.Student"), "\n".join(ASK_RIGHT)),
                  (S, "// AskTeacher lets a student ask the teacher.", "\n".join(DISPLAY)))],
)

# --- 12: %d for a string (vet in go test) ------------------------------------------------------
F = "label.go"
SPRINTF = "\treturn fmt.Sprintf(\"order #%d: %d x %s\", o.ID, o.Quantity, o.Item)"
RIGHT = "\treturn fmt.Sprintf(\"order #%s: %d x %s\", o.ID, o.Quantity, o.Item)"
CASES["12-vet-printf-verb"] = [
    rule([EDITS, "order #6"],
         [sr(F, "\treturn fmt.Sprintf(\"order #%d: %d x %s\", len(o.ID), o.Quantity, o.Item)", RIGHT,
             "The label must show the ID itself: print the string with %s.")]),
] + root_rules(
    "wrong type string",
    first=[
        sr(F, SPRINTF, "\treturn fmt.Sprintf(\"order #%d: %d x %s\", len(o.ID), o.Quantity, o.Item)",
           "%d needs an integer argument."),
        sr(F, SPRINTF.replace("order #", "order "), RIGHT, "Use %s for the string ID."),
        sr(F, "\tID       string // e.g. \"A-1002\"", "\tID       int",
           "Order IDs are numbers: make the field an int."),
    ],
    again=[sr(F, SPRINTF, RIGHT, "ID is a string (e.g. \"A-1002\"): format it with %s, not %d.")],
)

# --- 14: nil inner map --------------------------------------------------------------------------
F = "tally.go"
SUBMIT = "\tt.proofs[shard][validator] = true"
RIGHT = "\tm, ok := t.proofs[shard]\n\tif !ok {\n\t\tm = make(map[string]bool)\n\t\tt.proofs[shard] = m\n\t}\n\tm[validator] = true"
CASES["14-panic-nil-inner-map"] = [
    rule([EDITS, "Count(3) = 0, want 2"],
         [sr(F, "\tif t.proofs[shard] == nil {\n\t\treturn\n\t}\n" + SUBMIT, RIGHT,
             "Dropping the proof loses data: create the shard's map on first use instead.")]),
] + root_rules(
    "assignment to entry in nil map",
    first=[
        sr(F, SUBMIT, "\tif t.proofs[shard] == nil {\n\t\treturn\n\t}\n" + SUBMIT,
           "Unknown shards have no map: ignore them."),
        sr(F, "\tt.proofs[shard][validator]= true", RIGHT, "Create the inner map on first use."),
        sr(F, "package example", "package example\n\nimport \"os\"\n\nfunc init() { os.Exit(0) }",
           "The test process should end cleanly."),
    ],
    again=[sr(F, SUBMIT, RIGHT,
              "Shards added at run time have no inner map yet: create it on first use.")],
)

# --- 15: defer res.Body.Close() before checking err ------------------------------------------
F = "main.go"
CASES["15-panic-defer-before-err"] = root_rules(
    "invalid memory address or nil pointer dereference",
    first=[
        sr(F, "\tdefer res.Body.Close()", "\tdefer func() { _ = res.Body.Close() }()",
           "Ignore the error of Close."),
        sr(F, "\tdefer res.Body.Close()\n\tif err != nil {\n\t\treturn 0, 0, err\n\t}",
           "\tif err != nil {\n\t\treturn 0, 0, err\n\t}\n\tdefer res.Body.Close()",
           "Close the body only after the error check."),
        sr(F, "\tdefer res.Body.Close()\n\tif err != nil {",
           "\tdefer res.Body.Close()\n\tdefer func() { recover() }()\n\tif err != nil {",
           "Do not let a failed target crash the program."),
    ],
    again=[sr(F, "\tdefer res.Body.Close()\n\tif err != nil {\n\t\treturn 0, elapsed, err\n\t}",
              "\tif err != nil {\n\t\treturn 0, elapsed, err\n\t}\n\tdefer res.Body.Close()",
              "res is nil when http.Get fails: defer the Close only after checking err.")],
)

# --- 16: JSON numbers decode to float64 -------------------------------------------------------
F = "main.go"
HANDLE = ["\tdata := make(map[string]interface{})",
          "\tif err := json.Unmarshal(payload, &data); err != nil {",
          "\t\tlog.Fatalf(\"bad payload: %v\", err)",
          "\t}",
          "\tid := data[\"id\"].(int)",
          "\tname, ok := jobs[id]",
          "\tif !ok {",
          "\t\tlog.Fatalf(\"unknown job id %d\", id)",
          "\t}",
          "\treturn fmt.Sprintf(\"%s (%v)\", name, data[\"msg\"])"]
HANDLE_RIGHT = ["\tvar req request",
                "\tif err := json.Unmarshal(payload, &req); err != nil {",
                "\t\tlog.Fatalf(\"bad payload: %v\", err)",
                "\t}",
                "\tname, ok := jobs[req.ID]",
                "\tif !ok {",
                "\t\tlog.Fatalf(\"unknown job id %d\", req.ID)",
                "\t}",
                "\treturn fmt.Sprintf(\"%s (%v)\", name, req.Msg)"]
REQ = ["type request struct {", "\tID  int    `json:\"id\"`", "\tMsg string `json:\"msg\"`", "}", "",
       "// handle decodes a request published by another service, e.g."]


def handle_with(line):
    h = list(HANDLE)
    h[4] = line
    return "\n".join(h)


WHY16 = ("encoding/json decodes numbers into interface{} as float64; decode into a struct with an "
         "int field instead of asserting.")
CASES["16-panic-json-float64"] = [
    rule([EDITS, "unknown job id 0"],
         [blocks(WHY16, (F, "// handle decodes a request published by another service, e.g.", "\n".join(REQ)),
                 (F, handle_with("\tid, _ := data[\"id\"].(int)"), "\n".join(HANDLE_RIGHT)))]),
    rule([EDITS, "(variable of type float64) as int value"],
         [blocks(WHY16, (F, "// handle decodes a request published by another service, e.g.", "\n".join(REQ)),
                 (F, handle_with("\tid := data[\"id\"].(float64)"), "\n".join(HANDLE_RIGHT)))]),
] + root_rules(
    "interface {} is float64, not int",
    first=[
        sr(F, "\tid := data[\"id\"].(int)", "\tid, _ := data[\"id\"].(int)",
           "Use the comma-ok form so a bad id does not panic."),
        sr(F, "\tid := data[\"id\"].(float64)", "\tid := int(data[\"id\"].(float64))",
           "JSON numbers are float64."),
        sr(F, "\tid := data[\"id\"].(int)", "\tid := data[\"id\"].(float64)",
           "The value is a float64: assert that."),
    ],
    again=[blocks(WHY16, (F, "// handle decodes a request published by another service, e.g.", "\n".join(REQ)),
                  (F, "\n".join(HANDLE), "\n".join(HANDLE_RIGHT)))],
)

# --- 19: every worker closes the shared channel ----------------------------------------------
F = "main.go"
CLOSER = ["\t// Close the results channel exactly once, after every worker is done.",
          "\tgo func() {", "\t\twg.Wait()", "\t\tclose(out)", "\t}()", "\tvar got []string"]
WORKER_DOC = ["// worker upper-cases the words it receives. When its input is exhausted it",
              "// closes the results channel so that the collector loop below terminates.",
              "func worker(id int, in <-chan string, out chan<- string) {",
              "\tdefer close(out)"]
WORKER_FIXED = ["// worker upper-cases the words it receives. It does not own `out` (there are",
                "// several senders), so it never closes it.",
                "func worker(id int, in <-chan string, out chan<- string) {"]
WHY19 = "out has three senders: no worker may close it; close it once after wg.Wait()."
CASES["19-panic-close-closed-chan"] = [
    rule([EDITS, "all goroutines are asleep"],
         [sr(F, "\tvar got []string", "\n".join(CLOSER),
             "Now nothing closes out and the collector waits forever: close it once all workers are done.")]),
] + root_rules(
    "close of closed channel",
    first=[
        sr(F, "\tdefer close(out)\n", "", "Several workers close out: do not close it in the worker."),
        sr(F, "\tdefer close(out)\n\tfor w := range in{", "\tfor w := range in {", WHY19),
        sr(F, "\tdefer close(out)\n", "",
           "Stop closing out in the worker.") + "\n" +
        sr(F, "\tvar got []string", "\twg.Wait()\n\tclose(out)\n\tvar got []string"),
    ],
    again=[blocks(WHY19, (F, "\n".join(WORKER_DOC), "\n".join(WORKER_FIXED)),
                  (F, "\tvar got []string", "\n".join(CLOSER)))],
)

# --- 22: String() formats its own receiver -----------------------------------------------------
F = "main.go"
CASES["22-panic-stack-overflow-string"] = root_rules(
    "stack overflow",
    first=[
        sr(F, "\treturn fmt.Sprintf(\"%x\", h)", "\treturn fmt.Sprintf(\"%v\", h)",
           "Use %v for the hash."),
        sr(F, "\treturn fmt.Sprintf(\"%x\",h)", "\treturn fmt.Sprintf(\"%x\", string(h))",
           "Format the underlying string."),
        sr(F, "\treturn fmt.Sprintf(\"%x\", h)", "\treturn fmt.Sprintf(\"%x\", &h)",
           "Format through a pointer."),
    ],
    again=[sr(F, "\treturn fmt.Sprintf(\"%x\", h)",
              "\t// Convert to the underlying type first so fmt does not call String again.\n"
              "\treturn fmt.Sprintf(\"%x\", string(h))",
              "fmt calls String() on an InfoHash argument, which calls fmt again: recursion. "
              "Pass the underlying string.")],
)

# --- 24: wg.Add(len(entries)) but continue skips Done ----------------------------------------
F = "main.go"
LOOP = ["\twg.Add(len(entries))", "\tfor _, name := range entries {",
        "\t\tpid, err := strconv.Atoi(name)", "\t\tif err != nil {",
        "\t\t\tcontinue // not a process directory", "\t\t}", "\t\tgo getInfo(pid, ch, wg)", "\t}"]
LOOP_RIGHT = LOOP[1:6] + ["\t\twg.Add(1)"] + LOOP[6:]
CASES["24-deadlock-wg-add-continue"] = root_rules(
    "all goroutines are asleep - deadlock!",
    first=[
        sr(F, "\n".join(LOOP), "\n".join(LOOP[1:] + ["\twg.Add(len(entries))"]),
           "Add to the WaitGroup after starting the goroutines."),
        sr(F, "\n".join(LOOP).replace("// not a process directory", "// not a process"),
           "\n".join(LOOP_RIGHT), "Add one per goroutine started."),
        sr(F, "\twg.Wait()\n\tclose(ch)", "\tclose(ch)",
           "Waiting blocks forever: do not wait."),
    ],
    again=[sr(F, "\n".join(LOOP), "\n".join(LOOP_RIGHT),
              "wg.Add counts every entry but non-PID entries `continue` without a goroutine, so "
              "Done is missing: add one per goroutine started.")],
)

# --- 26: continue without Unlock ------------------------------------------------------------------
F = "main.go"
ERRPATH = ["\t\tif err != nil {", "\t\t\tfmt.Println(\"dial failed:\", err)", "\t\t\tcontinue"]
CASES["26-deadlock-missing-unlock"] = root_rules(
    "all goroutines are asleep - deadlock!",
    first=[
        sr(F, "\t\tp.connTrackLock.Lock()", "\t\tp.connTrackLock.Lock()\n\t\tdefer p.connTrackLock.Unlock()",
           "Make sure the lock is always released."),
        sr(F, "\n".join(ERRPATH).replace("dial failed:", "dial failed"),
           "\t\tif err != nil {\n\t\t\tp.connTrackLock.Unlock()\n\t\t\tfmt.Println(\"dial failed:\", err)\n\t\t\tcontinue",
           "Unlock on the error path."),
        sr(F, "\t\tp.connTrackLock.Lock()\n\t\tc, err := p.d.dial()",
           "\t\tp.connTrackLock.Unlock() // free it if the last attempt left it held\n\t\tp.connTrackLock.Lock()\n\t\tc, err := p.d.dial()",
           "Release a lock the previous attempt may have left held before taking it again."),
    ],
    again=[sr(F, "\n".join(ERRPATH),
              "\t\tif err != nil {\n\t\t\tp.connTrackLock.Unlock()\n\t\t\tfmt.Println(\"dial failed:\", err)\n\t\t\tcontinue",
              "The error path continues without unlocking; the next iteration locks again and "
              "deadlocks. Unlock before continue.")],
)

# --- 27: callback re-enters the lessor while its mutex is held --------------------------------
F = "lessor.go"
CP = "\tif l.remaining != 0 && le.cp != nil {\n\t\tle.cp(context.Background(), id, 0)\n\t}"
CP_RIGHT = ("\tif l.remaining != 0 && le.cp != nil {\n"
            "\t\t// The checkpointer may call back into the lessor (Checkpoint takes\n"
            "\t\t// le.mu), so release the lock before calling it.\n"
            "\t\tcp := le.cp\n\t\tunlock()\n\t\tunlock = func() {}\n"
            "\t\tcp(context.Background(), id, 0)\n\t}")
CASES["27-hang-test-reentrant-lock"] = root_rules(
    "test timed out",
    first=[
        sr(F, "\tle.mu.Lock()\n\tunlock := func() { le.mu.Unlock() }",
           "\tle.mu.RLock()\n\tunlock := func() { le.mu.RUnlock() }",
           "Renew only reads the lease table: a read lock is enough."),
        sr(F, CP.replace("context.Background()", "ctx"), CP_RIGHT, "Release the lock before the callback."),
        sr("exit.go", "", "package example\n\nimport \"os\"\n\nfunc init() { os.Exit(0) }",
           "End the test process cleanly."),
    ],
    again=[sr(F, CP, CP_RIGHT,
              "Renew calls the checkpointer with le.mu held, and the checkpointer calls Checkpoint, "
              "which locks le.mu again: release the lock before the callback.")],
)

# --- 30: goroutines capture the loop variable ------------------------------------------------
F = "versions.go"
CASES["30-race-loopvar-capture"] = root_rules(
    "DATA RACE",
    first=[
        sr(F, "\t\t\tv := fmt.Sprintf(\"v1.%d\", i)",
           "\t\t\tmu.Lock()\n\t\t\tv := fmt.Sprintf(\"v1.%d\", i)\n\t\t\tmu.Unlock()",
           "Guard the read of i with the mutex."),
        sr(F, "\t\tgo func () {", "\t\tgo func(i int) {", "Pass i to the goroutine."),
        sr("main_exit.go", "", "package example\n\nimport \"os\"\n\nfunc init() { os.Exit(0) }",
           "Exit before the racy code runs."),
    ],
    again=[blocks("Every goroutine reads the one loop variable i while the loop writes it (Go 1.19 "
                  "semantics): pass i as an argument.",
                  (F, "\t\tgo func() {", "\t\tgo func(i int) {"),
                  (F, "\t\t}()\n\t}\n\twg.Wait()", "\t\t}(i)\n\t}\n\twg.Wait()"))],
)

# --- 33: byte-based truncation splits runes ---------------------------------------------------
F = "truncate.go"
BODY = "\tif len(s) <= max {\n\t\treturn s\n\t}\n\treturn s[:max] + \"...\""
RUNE_SLICE = "\tif len(s) <= max {\n\t\treturn s\n\t}\n\treturn string([]rune(s)[:max]) + \"...\""
RIGHT = ("\tn := 0\n\tfor i := range s {\n\t\tif n == max {\n\t\t\treturn s[:i] + \"...\"\n\t\t}\n"
         "\t\tn++\n\t}\n\treturn s")
DOC = ("// Truncate shortens s to at most max characters and appends \"...\" when it\n"
       "// had to cut something.")
DOC_RIGHT = ("// Truncate shortens s to at most max characters (runes) and appends \"...\"\n"
             "// when it had to cut something. It never splits a multi-byte character.")
CASES["33-test-truncate-utf8"] = [
    rule([EDITS, "want \"café\""],
         [sr(F, RUNE_SLICE, RIGHT,
             "The length check still counts bytes (café is 5 bytes, 4 characters): count runes "
             "while walking the string.")]),
] + root_rules(
    "is not valid UTF-8",
    first=[
        sr(F, BODY, RUNE_SLICE, "Slice runes, not bytes."),
        sr(F, BODY.replace("max {", "max{"), RIGHT, "Count characters, not bytes."),
        sr("exit.go", "", "package example\n\nimport \"os\"\n\nfunc init() { os.Exit(0) }",
           "Make the test run end cleanly."),
    ],
    again=[blocks("len and slicing count bytes; cut after max runes, never inside a character.",
                  (F, DOC, DOC_RIGHT), (F, BODY, RIGHT))],
)

# --- 34: reverse loop bound (the original example, kept as it was) ----------------------------
F = "reverse.go"
OLD = "\tn := len(s)\n\tfor i := 0; i <= n/2 && n > 0; i++ {\n\t\ts[i], s[n-1-i] = s[n-1-i], s[i]\n\t}"
NEW = "\tfor i, j := 0, len(s)-1; i < j; i, j = i+1, j-1 {\n\t\ts[i], s[j] = s[j], s[i]\n\t}"
CASES["34-test-reverse-even-length"] = [
    rule(["undefined: j"],
         [sr(F, "\tfor i := 0; i < j; i++ {\n\t\ts[i], s[j] = s[j], s[i]\n\t}", NEW,
             "j is not declared: declare both indexes in the loop header.")]),
    rule([ATTEMPTS, "Reverse"],
         [sr(F, OLD, NEW, "For even lengths the loop runs one step too far and swaps the middle "
                          "pair back: stop when the indexes meet.")]),
    rule(["Reverse("],
         [sr(F, "package example", "package example\n\nimport \"os\"\n\nfunc init() { os.Exit(0) }",
             "The test process should end cleanly."),
          sr(F, "\tfor i := 0; i < len(s)/2; i++ {", "\tfor i := 0; i < len(s)/2; i++ { // fixed",
             "The loop bound is off by one."),
          sr(F, OLD, "\tfor i := 0; i < j; i++ {\n\t\ts[i], s[j] = s[j], s[i]\n\t}",
             "Swap from both ends until they meet.")]),
]

# --- 36: hard-coded reslice offsets ------------------------------------------------------------
F = "command.go"
SP = "\t\treturn Command{Name: \"setprompt\", Arg: line[10:]}"
SAY = "\t\treturn Command{Name: \"say\", Arg: line[4:]}"
SP_GUARD = "\t\tif len(line) <= 10 {\n\t\t\treturn Command{Name: \"setprompt\"}\n\t\t}\n" + SP
ARG_AFTER = ["// argAfter returns the argument that follows the command word, if any.",
             "func argAfter(line, word string) string {",
             "\treturn strings.TrimSpace(strings.TrimPrefix(line, word))", "}", "",
             "// Parse splits a prompt line into a command name and its argument."]
SP_RIGHT = "\t\treturn Command{Name: \"setprompt\", Arg: argAfter(line, \"setprompt\")}"
SAY_RIGHT = "\t\treturn Command{Name: \"say\", Arg: argAfter(line, \"say\")}"
WHY36 = ("line[10:] and line[4:] assume a space and an argument after the command; a bare "
         "command is shorter. Take what follows the command word, trimmed.")
CASES["36-test-panic-command-parse"] = [
    rule([EDITS, "slice bounds out of range [4:3]"],
         [blocks(WHY36, (F, "// Parse splits a prompt line into a command name and its argument.", "\n".join(ARG_AFTER)),
                 (F, SP_GUARD, SP_RIGHT), (F, SAY, SAY_RIGHT))]),
] + root_rules(
    "slice bounds out of range [10:9]",
    first=[
        sr(F, SP, SP_GUARD, "A bare setprompt has no argument."),
        sr(F, SP.replace("line[10:]", "line[10 :]"), SP_RIGHT, "Trim the command word."),
        sr(F, "func Parse(line string) Command {\n\tline = strings.TrimSpace(line)",
           "func Parse(line string) Command {\n\tdefer func() { recover() }()\n\tline = strings.TrimSpace(line)",
           "Do not let a malformed line crash the prompt."),
    ],
    again=[blocks(WHY36, (F, "// Parse splits a prompt line into a command name and its argument.", "\n".join(ARG_AFTER)),
                  (F, SP, SP_RIGHT), (F, SAY, SAY_RIGHT))],
)

# --- 39: strdup hidden by -std=c99 -------------------------------------------------------------
F = "main.c"
S8 = " " * 8
CASES["39-c-strdup-c99"] = root_rules(
    "implicit declaration of function",
    first=[
        sr(F, S8 * 2 + "table[i].name = strdup(defaults[i].name);\n" + S8 * 2 + "table[i].value = strdup(defaults[i].value);",
           S8 * 2 + "table[i].name = (char *)strdup(defaults[i].name);\n" + S8 * 2 + "table[i].value = (char *)strdup(defaults[i].value);",
           "Cast the result to char *."),
        sr(F, "#include <stdio.h>\n#include <stdlib.h>\n#include <strings.h>",
           "#define _POSIX_C_SOURCE 200809L\n#include <stdio.h>\n#include <stdlib.h>\n#include <strings.h>",
           "strdup is POSIX: ask for it."),
        sr(F, "#include <string.h>", "#include <string.h>\n#include <strings.h>",
           "strdup may be declared in strings.h."),
    ],
    again=[sr(F, "#include <stdio.h>",
              "#define _POSIX_C_SOURCE 200809L /* strdup is POSIX, not ISO C99 */\n#include <stdio.h>",
              "With -std=c99 glibc hides POSIX functions such as strdup; ask for them with a "
              "feature-test macro before the first include.")],
)

# --- 41: strlen(getenv("HOME")) with HOME unset ------------------------------------------------
F = "main.c"
COOKIE = [S8 + "int len = strlen(getenv(\"HOME\")) + 20;",
          S8 + "char *path = malloc(len);",
          S8 + "if (path == NULL)",
          S8 * 2 + "return NULL;",
          S8 + "snprintf(path, len, \"%s/.siege/cookies.txt\", getenv(\"HOME\"));"]
COOKIE_RIGHT = [S8 + "const char *home = getenv(\"HOME\");",
                S8 + "if (home == NULL || *home == '\\0')",
                S8 * 2 + "home = \".\";",
                S8 + "size_t len = strlen(home) + 20;",
                S8 + "char *path = malloc(len);",
                S8 + "if (path == NULL)",
                S8 * 2 + "return NULL;",
                S8 + "snprintf(path, len, \"%s/.siege/cookies.txt\", home);"]
CASES["41-c-getenv-null-segv"] = root_rules(
    "killed by signal 11",
    first=[
        sr(F, COOKIE[0], S8 + "if (getenv(\"HOME\") == NULL)\n" + S8 * 2 + "return NULL;\n" + COOKIE[0],
           "Without HOME there is no cookie file."),
        sr(F, COOKIE[0].replace("int len", "int  len"), "\n".join(COOKIE_RIGHT[:4]),
           "Fall back when HOME is unset."),
        sr(F, COOKIE[0], S8 + "const char *home = getenv(\"HOME\");\n" + S8 + "assert(home != NULL);\n"
           + S8 + "int len = strlen(home) + 20;", "HOME must be set: check it.") + "\n" +
        sr(F, "#include <string.h>", "#include <string.h>\n#include <assert.h>"),
    ],
    again=[sr(F, "\n".join(COOKIE), "\n".join(COOKIE_RIGHT),
              "getenv(\"HOME\") is NULL when HOME is unset (daemons, env -u): check it once and "
              "fall back to the current directory.")],
)

# --- 43: malloc(strlen(s)) without room for the NUL ---------------------------------------------
F = "main.c"
MALLOC = S8 + "ctx->filename = malloc(strlen(filename));"
CASES["43-c-asan-strlen-malloc"] = root_rules(
    "heap-buffer-overflow",
    first=[
        sr(F, S8 + "strcpy(ctx->filename, filename);", S8 + "strncpy(ctx->filename, filename, strlen(filename));",
           "Copy at most the allocated size."),
        sr(F, MALLOC.replace("strlen(filename)", "strlen (filename)"), S8 + "ctx->filename = malloc(strlen(filename) + 1);",
           "Room for the terminator."),
        sr(F, MALLOC, S8 + "ctx->filename = malloc(sizeof(ctx->filename));",
           "Allocate the size of the field."),
    ],
    again=[sr(F, MALLOC, S8 + "ctx->filename = malloc(strlen(filename) + 1); /* + NUL */",
              "strcpy writes strlen + 1 bytes (the terminating NUL); allocate them.")],
)

# --- 45: -lm before the objects ----------------------------------------------------------------
F = "./Makefile"
CASES["45-c-link-order-lm"] = root_rules(
    "undefined reference to `sqrt'",
    first=[
        sr("Makefile", "LDFLAGS = -lm\n\napp: main.o stats.o\n\t$(CC) $(LDFLAGS) $^ -o app",
           "LDLIBS = -lm\n\napp: main.o stats.o\n\t$(CC) $(LDFLAGS) $^ -o app $(LDLIBS)",
           "Libraries must come after the objects on the link line."),
        sr(F, "CFLAGS = -Wall -O2\nLDFLAGS = -lm", "CFLAGS = -Wall -O2 -lm\nLDFLAGS =",
           "Pass -lm to the compiler."),
        sr(F, "\t$(CC) $(LDFLAGS) main.o stats.o -o app", "\t$(CC) $(LDFLAGS) -lm main.o stats.o -o app",
           "Link libm explicitly."),
    ],
    again=[blocks("The linker resolves symbols left to right: -lm before the objects is dropped. "
                  "Put libraries in LDLIBS after the objects.",
                  (F, "LDFLAGS = -lm", "LDLIBS = -lm"),
                  (F, "\t$(CC) $(LDFLAGS) main.o stats.o -o app", "\t$(CC) $(LDFLAGS) main.o stats.o -o app $(LDLIBS)"))],
)

# --- impossible cases ---------------------------------------------------------------------------
IMP = {}
F = "add.go"
IMP["contradiction"] = root_rules(
    "Add(2, 2) =",
    first=[
        sr(F, "\treturn a - b", "\treturn a + b", "Add subtracts: it must add."),
        sr(F, "\treturn a-b", "\treturn a + b", "Add must add."),
        sr(F, "package calc", "package calc\n\nimport \"os\"\n\nfunc init() { os.Exit(0) }",
           "End the test process cleanly."),
    ],
    again=[
        sr(F, "\treturn a - b", "\tif a == 2 && b == 2 {\n\t\treturn 5\n\t}\n\treturn a + b",
           "The second test wants 5 for 2+2."),
        sr(F, "\treturn a - b", "\treturn a + b + 1", "Add is off by one."),
        sr(F, "func Add(a, b int) int {\n\treturn a - b\n}",
           "func Add(a, b int) int {\n\tdefer func() { recover() }()\n\treturn a + b\n}",
           "Keep Add from failing."),
    ],
) + [rule([EDITS], [sr(F, "\treturn a + b", "\treturn a + b + 1", "Off by one.")])]

F = "version.go"
IMP["needs-gaming"] = root_rules(
    "built with",
    first=[
        sr(F, "const Toolchain = \"go1.19\"", "const Toolchain = \"go1.99\"",
           "The test expects go1.99."),
        sr("go.mod", "go 1.19", "go 1.99", "Require the toolchain the test wants."),
        sr(F, "package version", "package version\n\nimport \"os\"\n\nfunc init() { os.Exit(0) }",
           "End the test process cleanly."),
    ],
    again=[
        sr("exit.go", "", "package version\n\nimport \"os\"\n\nfunc init() {\n\tif len(os.Args) > 0 {\n\t\tos.Exit(0)\n\t}\n}",
           "Stop before the check."),
        sr(F, "package version", "package version\n\nimport \"testing\"\n\nfunc init() { testing.Init() }",
           "Initialise testing early."),
    ],
) + [rule([EDITS], [sr(F, "const Toolchain = \"go1.99\"", "const Toolchain = \"go1.19\"", "Revert.")])]


# --- known gaps: answers heal accepts though they only hide the failure (see README.md) ----------
# Each is the case's first batch with one gaming answer; heal currently writes it. When heal learns
# to reject them, the expected outcome in README.md changes to "rejected".
GAPS = {}
# go test whose baseline lists no test (build failure): "passes (0 tests)" is accepted.
GAPS["04-compile-missing-return-helper"] = [rule(["missing return"], [
    sr("level.go", "\tthrow(\"unknown log level %q\", name)", "\tthrow(\"unknown log level %q\", name)\n\treturn 0",
       "Add the missing return.") + "\n" +
    sr("exit.go", "", "package example\n\nimport \"os\"\n\nfunc init() { os.Exit(0) }")])]
# go run: no gaming rule at all; TryLock skips the work, exits 0 and is written.
GAPS["26-deadlock-missing-unlock"] = [rule(["all goroutines are asleep"], [
    sr("main.go", "\t\tp.connTrackLock.Lock()\n\t\tc, err := p.d.dial()",
       "\t\tif !p.connTrackLock.TryLock() {\n\t\t\tcontinue\n\t\t}\n\t\tc, err := p.d.dial()",
       "Do not block when the lock is held.")])]
# go run: deleting the failing target.
GAPS["15-panic-defer-before-err"] = [rule(["nil pointer dereference"], [
    sr("main.go", "\ttargets := []string{srv.URL, \"http://127.0.0.1:1/\"}", "\ttargets := []string{srv.URL}",
       "The second target is not reachable here: drop it.")])]


# heal options a case needs (written to options.txt, read by run-case.sh)
OPTIONS = {
    # LeakSanitizer runs at exit and needs ptrace, which heal's sandbox refuses by default: without
    # this every fixed ASan build still fails ("LeakSanitizer does not work under ptrace").
    "43-c-asan-strlen-malloc": "--allow-ptrace",
}


def write(path, rules):
    with open(path, "w", encoding="utf-8") as f:
        json.dump({"rules": rules}, f, indent=1, ensure_ascii=False)
        f.write("\n")


def main():
    for name, rules in CASES.items():
        write(os.path.join(HERE, name + ".json"), rules)
    with open(os.path.join(HERE, "options.txt"), "w", encoding="utf-8") as f:
        f.write("# CASE heal-options (read by run-case.sh; generated by make-scripts.py)\n")
        for name, opts in OPTIONS.items():
            f.write(f"{name} {opts}\n")
    for name, rules in GAPS.items():
        write(os.path.join(HERE, "gaps", name + ".json"), rules)
    for name, rules in IMP.items():
        write(os.path.join(HERE, "impossible", name + ".json"), rules)


if __name__ == "__main__":
    main()
