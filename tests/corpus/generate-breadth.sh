#!/usr/bin/env bash
# The corpus at its widest: the kinds of tools it had none of — linters and type checkers,
# formatters, build configurators, test runners, databases, crash dumps, languages' own
# runtimes — each the real tool, run here on a project made for it: many routine lines (often a
# run of findings of one shape, the errors a few among many warnings), one failure or two, and the
# lines a developer must see chosen from the failure's before any cutter ran (`must_grep`: the
# lines holding the given strings; the block a failure opens where its detail is what is wanted).
#
# These outputs are the signal gate's held-out part's source (`tools.txt` says which tools are
# held out): nothing of the salience model was chosen on the held-out ones.
#
# Run it by hand, as root on Debian 12 (it installs what it needs: Debian's packages, and pinned
# PyPI and npm packages into its scratch folder); the outputs are committed, so the tests and the
# signal gate need none of these tools.
#
#   bash tests/corpus/generate-breadth.sh            every case
#   bash tests/corpus/generate-breadth.sh NAME...    those cases (each a function `case_NAME`)
set -euo pipefail
# shellcheck source=tests/corpus/lib.sh
source "$(dirname "$0")/lib.sh"
# Held out (tools.txt says which tools): written in a folder of their own. A case whose tool
# the tuning part has already (python, gdb, git, …) writes there instead (`tuning`).
tuning_dir=$here
here="$here/held-out"
mkdir -p "$here"
tuning() { here=$tuning_dir; }

out_as_work() { sed -e "s|$work|/work|g" -e "s|/tmp/tmp\.[A-Za-z0-9]*|/work|g" | out "$1"; }

apt_packages=(shellcheck cmake meson ninja-build autoconf automake bison flex clang clang-tidy
    cppcheck ruby php-cli golang-go lua5.4 libxml2-utils tidy redis-server sqlite3 unzip zip ltrace gawk
    xz-utils zstd gnupg openssh-client wget nginx
    postgresql tcl gcc g++ valgrind gdb python3-venv git)
python_packages=(pylint==4.1.4 flake8==7.5.0 black==26.10.1 isort==9.0.2 yamllint==1.38.0
    bandit==1.9.4 pydocstyle==6.3.0 hypothesis==6.170.17 coverage==7.17.5 pytest==9.2.0
    sqlfluff==4.5.0 uv==0.13.9)
npm_packages=(eslint@10.15.0 prettier@3.10.1 stylelint@16.8.0 markdownlint-cli@0.50.0
    htmlhint@1.9.2 mocha@12.0.3 jshint@2.13.6)

# The tools, installed: Debian's packages, and the pinned PyPI and npm packages in a folder of
# their own ($BREADTH_TOOLS when it holds them already, from an earlier run; else the scratch).
tools() {
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${apt_packages[@]}" >/dev/null
    local dir=${BREADTH_TOOLS:-$work/tools}
    if [[ ! -x $dir/venv/bin/pylint ]]; then
        python3 -m venv "$dir/venv"
        "$dir/venv/bin/pip" install -q "${python_packages[@]}"
    fi
    if [[ ! -x $dir/node_modules/.bin/eslint ]]; then
        mkdir -p "$dir" && (cd "$dir" && npm init -y >/dev/null && npm install -q --no-audit --no-fund "${npm_packages[@]}" >/dev/null)
    fi
    export PATH="$dir/venv/bin:$dir/node_modules/.bin:$PATH"
}

# A scratch project folder named $1, made current.
project() { rm -rf "${work:?}/$1"; mkdir -p "$work/$1" && cd "$work/$1"; }

# ---- Python's linters, checkers and test tools ----

case_pylint() {
    project pylint && mkdir app
    for i in $(seq 1 90); do
        printf 'import os\nimport sys\n\n\ndef handler_%d(request, unused):\n    value = request.get("id")\n    return value\n' "$i" > "app/m$i.py"
    done
    printf 'import os\n\n\ndef load(config):\n    return config.missing_method()\n\n\ndef save(rows):\n    return undefined_writer(rows)\n' > app/m47.py
    printf 'class Store:\n    def get(self):\n        return self.itmes\n' > app/m72.py
    pylint --persistent=n app 2>&1 | out_as_work pylint || true
    must_grep pylint "E0602" "E1101" "Your code has been rated"
}

case_flake8() {
    project flake8 && mkdir src
    for i in $(seq 1 150); do
        printf 'import os \nx = 1\ndef f():\n    return os.path.join("a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "lmnopqrstu")\n' > "src/m$i.py"
    done
    printf 'def total(rows):\n    return sum(r.amount for r in rowz)\n' > src/m88.py
    flake8 src 2>&1 | sort -V | out_as_work flake8 || true
    must_grep flake8 "F821 undefined name 'rowz'"
}

case_black() {
    project black && mkdir pkg
    for i in $(seq 1 120); do
        printf 'def f%d(a, b):\n    return a + b\n' "$i" > "pkg/m$i.py"
    done
    printf 'def broken(:\n    return 1\n' > pkg/m64.py
    printf 'x = {  "a":1,  "b" :2 }\n' > pkg/m99.py
    black --check -v pkg 2>&1 | sort | out_as_work black-check || true
    must_grep black-check "error: cannot parse" "would reformat" "file would be reformatted"
}

case_yamllint() {
    project yamllint && mkdir k8s
    for i in $(seq 1 60); do
        printf -- '---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app-%d\ndata:\n  enabled: yes\n  url: "http://example.internal/a/very/long/path/that/goes/on/and/on/and/on/until/it/passes/the/limit"\n' "$i" > "k8s/cm$i.yaml"
    done
    printf -- '---\nkind: Deployment\nspec:\n  replicas: 2\n  replicas: 3\n' > k8s/deploy.yaml
    printf -- '---\nkind: Service\nspec:\n  ports: [80, 443\n' > k8s/service.yaml
    yamllint k8s 2>&1 | out_as_work yamllint || true
    must_grep yamllint "k8s/deploy.yaml" "k8s/service.yaml" 'duplication of key "replicas"' "syntax error"
}

case_bandit() {
    project bandit && mkdir svc
    for i in $(seq 1 40); do
        printf 'import random\nimport subprocess\n\n\ndef token_%d():\n    assert random.random() >= 0\n    return random.random()\n' "$i" > "svc/m$i.py"
    done
    printf 'import subprocess\n\n\ndef run(user_input):\n    return subprocess.call("ls " + user_input, shell=True)\n' > svc/shell.py
    bandit -r svc 2>&1 | sed -e 's/Run started:.*/Run started: 2026-12-02 08:00:00/' | out_as_work bandit || true
    must_grep bandit "[B602:subprocess_popen_with_shell_equals_true]" "Severity: High"
}

case_hypothesis() {
    tuning
    project hypothesis
    cat > test_codec.py <<'PY'
from hypothesis import given, settings, strategies as st

def encode(text):
    return text.replace("%", "%25").replace(",", "%2C")

def decode(text):
    return text.replace("%2C", ",").replace("%25", "%")

@settings(database=None, derandomize=True)
@given(st.text())
def test_round_trip(text):
    assert decode(encode(text)) == text

@settings(database=None, derandomize=True)
@given(st.lists(st.integers()))
def test_sorted_is_idempotent(xs):
    assert sorted(sorted(xs)) == sorted(xs)

def decode_bad(text):
    return text.replace("%25", "%").replace("%2C", ",")

@settings(database=None, derandomize=True)
@given(st.text(alphabet="%2C,5a"))
def test_bad_round_trip(text):
    assert decode_bad(encode(text)) == text
PY
    for i in $(seq 1 60); do printf 'def test_ok_%d():\n    assert %d == %d\n' "$i" "$i" "$i" >> test_more.py; done
    pytest -v -p no:cacheprovider 2>&1 | sed -e 's/in [0-9.]*s/in 1.23s/' | out_as_work hypothesis || true
    must_grep hypothesis "E       AssertionError: assert" "Failing test case: test_bad_round_trip(" "FAILED test_codec.py::test_bad_round_trip"
}

case_coverage() {
    project coverage && mkdir lib
    for i in $(seq 1 80); do printf 'def f(x):\n    return x + %d\n' "$i" > "lib/m$i.py"; done
    printf 'def used(x):\n    return x\n\n\ndef unused(x):\n    if x:\n        return 1\n    return 2\n' > lib/billing.py
    printf 'import importlib\nfor i in range(1, 81):\n    importlib.import_module(f"lib.m{i}").f(1)\nimport lib.billing as b\nb.used(1)\n' > run.py
    touch lib/__init__.py
    coverage run run.py >/dev/null
    coverage report --fail-under=99 2>&1 | out_as_work coverage-report || true
    must_grep coverage-report "lib/billing.py" "Coverage failure: total of"
}

case_sqlfluff() {
    project sqlfluff && mkdir models
    for i in $(seq 1 40); do printf 'SELECT a,b FROM t%d WHERE a=1\n' "$i" > "models/m$i.sql"; done
    printf 'SELECT id, FROM orders WHERE\n' > models/broken.sql
    sqlfluff lint --dialect ansi models 2>&1 | out_as_work sqlfluff || true
    must_grep sqlfluff "PRS" "== [models/broken.sql] FAIL"
}

case_python_faulthandler() {
    tuning
    project faulthandler
    cat > worker.py <<'PY'
import ctypes, faulthandler, threading, time
faulthandler.enable()
def poll():
    while True:
        time.sleep(0.01)
threading.Thread(target=poll, name="poller", daemon=True).start()
def read_frame(address):
    return ctypes.string_at(address, 16)
def decode_batch(n, address):
    for i in range(n):
        print(f"batch {n}: frame {i} decoded, 4096 bytes", flush=True)
    return read_frame(address) if address else b""
for n in range(1, 30):
    decode_batch(n, 0xFFFFFFFFFFFF0000 if n == 29 else None)
PY
    python3 worker.py 2>&1 | sed -E 's/0x[0-9a-f]{6,}/0x7f0000000000/g' | out_as_work python-faulthandler || true
    must_grep python-faulthandler "Fatal Python error: Segmentation fault" "Current thread" 'line 8 in read_frame'
}

case_python_chained() {
    tuning
    project chained
    cat > load.py <<'PY'
import json, logging
logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
log = logging.getLogger("loader")
class ConfigError(Exception):
    pass
def read(path):
    with open(path) as f:
        return json.load(f)
def load(path):
    try:
        return read(path)
    except FileNotFoundError as error:
        raise ConfigError(f"no configuration at {path}") from error
for i in range(1, 120):
    log.info("loaded shard %d of 120 (%d keys)", i, 40 + i % 7)
load("/etc/orders/shards.json")
PY
    python3 load.py 2>&1 | out_as_work python-chained || true
    must_grep python-chained "FileNotFoundError: [Errno 2]" "The above exception was the direct cause of the following exception:" "ConfigError: no configuration at"
}

# ---- JavaScript's ----

case_eslint() {
    project eslint && mkdir src
    printf 'export default [{ files: ["**/*.js"], languageOptions: { sourceType: "module", globals: { console: "readonly" } }, rules: { "no-unused-vars": "warn", "prefer-const": "warn", "no-undef": "error" } }];\n' > eslint.config.mjs
    for i in $(seq 1 120); do
        printf 'export function handler%d(request, unused) {\n  let value = request.id;\n  return value;\n}\n' "$i" > "src/h$i.js"
    done
    printf 'export function total(rows) {\n  let sum = 0;\n  for (const row of rowz) sum += row.amount;\n  return sum;\n}\n' > src/h61.js
    eslint src 2>&1 | out_as_work eslint || true
    must_grep eslint "src/h61.js" "'rowz' is not defined" "problems (1 error,"
}

case_prettier() {
    project prettier && mkdir src
    for i in $(seq 1 150); do printf 'export const a%d = {x:1,y:2};\n' "$i" > "src/f$i.js"; done
    printf 'export const broken = {x: 1,, y: 2};\n' > src/f77.js
    prettier --check src 2>&1 | out_as_work prettier-check || true
    must_grep prettier-check "[error] src/f77.js: SyntaxError"
}

case_stylelint() {
    project stylelint && mkdir css
    printf '{ "defaultSeverity": "warning", "rules": { "color-hex-length": "short", "declaration-block-no-duplicate-properties": [true, { "severity": "error" }] } }\n' > .stylelintrc.json
    for i in $(seq 1 80); do printf '.card-%d { color: #ffffff; background: #000000; }\n' "$i" > "css/c$i.css"; done
    printf '.price { color: #ffffff; color: red; }\n' > css/c40.css
    stylelint "css/*.css" 2>&1 | out_as_work stylelint || true
    must_grep stylelint "css/c40.css" "Unexpected duplicate \"color\""
}

case_mocha() {
    project mocha && mkdir test
    for s in $(seq 1 12); do
        {
            printf 'const assert = require("node:assert");\ndescribe("orders %d", () => {\n' "$s"
            for t in $(seq 1 20); do printf '  it("computes total %d", () => assert.strictEqual(%d + 1, %d));\n' "$t" "$t" "$((t + 1))"; done
            printf '});\n'
        } > "test/orders$s.test.js"
    done
    printf 'const assert = require("node:assert");\ndescribe("refunds", () => {\n  it("keeps the currency", () => assert.deepStrictEqual({ amount: 5, currency: "EUR" }, { amount: 5, currency: "USD" }));\n});\n' > test/refunds.test.js
    mocha --reporter spec 'test/*.test.js' 2>&1 | sed -E 's/\([0-9]+ms\)/(1ms)/' | out_as_work mocha || true
    must_grep mocha "1 failing" "AssertionError [ERR_ASSERTION]: Expected values to be strictly deep-equal:"
}

case_jshint() {
    project jshint && mkdir lib
    for i in $(seq 1 100); do printf 'function f%d(a) {\n  var x = a\n  return x\n}\n' "$i" > "lib/f$i.js"; done
    printf 'function g(a) {\n  return a +;\n}\n' > lib/f50.js
    jshint lib 2>&1 | out_as_work jshint || true
    must_grep jshint "Expected an identifier and instead saw ';'."
}

case_node_oom() {
    tuning
    project node-oom
    cat > grow.js <<'JS'
const rows = [];
for (let batch = 1; ; batch++) {
  for (let i = 0; i < 20000; i++) rows.push({ batch, i, payload: "x".repeat(64) });
  console.log(`batch ${batch}: ${rows.length} rows in memory`);
}
JS
    node --max-old-space-size=32 grow.js 2>&1 | sed -E -e 's/0x[0-9a-f]+/0x55d000000000/g' -e 's/\[[0-9]+:0x[0-9a-f]+\]/[4242:0x55d000000000]/' -e 's/ [0-9]+ ms: / 1234 ms: /' | out_as_work node-oom || true
    must_grep node-oom "FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory"
}

case_npm_eresolve() {
    tuning
    project eresolve && mkdir -p pkgs/react pkgs/widget pkgs/app
    printf '{"name":"react","version":"17.0.2"}\n' > pkgs/react/package.json
    printf '{"name":"widget","version":"1.0.0","peerDependencies":{"react":"^18.0.0"}}\n' > pkgs/widget/package.json
    (cd pkgs/react && npm pack -q >/dev/null) && (cd pkgs/widget && npm pack -q >/dev/null)
    cd pkgs/app
    printf '{"name":"app","version":"1.0.0","dependencies":{"react":"file:../react/react-17.0.2.tgz","widget":"file:../widget/widget-1.0.0.tgz"}}\n' > package.json
    npm install --offline --no-audit --no-fund --loglevel=verbose 2>&1 | sed -E 's|/root/.npm/_logs/[^ ]*|/root/.npm/_logs/debug.log|' | out_as_work npm-eresolve || true
    must_grep npm-eresolve "ERESOLVE unable to resolve dependency tree" "Could not resolve dependency:" 'peer react@"^18.0.0" from widget@1.0.0'
}

# ---- C and C++: compilers, analyzers, configurators ----

# $1 files of plain C, each with a warning, in src/.
c_sources() {
    mkdir -p src
    for i in $(seq 1 "$1"); do
        printf '#include <stdio.h>\nint helper_%d(int n) {\n    int unused = n;\n    return n * 2;\n}\n' "$i" > "src/u$i.c"
    done
}

case_clang() {
    project clang && c_sources 60
    printf 'int parse(const char *s) {\n    return s->length;\n}\n' > src/u33.c
    for f in src/*.c; do clang -Wall -c "$f" -o /dev/null 2>&1 || true; done | out_as_work clang || true
    must_grep clang "error: member reference base type" "1 error generated."
}

case_clang_tidy() {
    project clang-tidy && c_sources 90
    printf '#include <string.h>\nvoid copy(char *dst, const char *src) {\n    strcpy(dst, src);\n    char *p = 0;\n    *p = 1;\n}\n' > src/u12.c
    clang-tidy src/*.c --checks='-*,readability-*,clang-analyzer-*' --warnings-as-errors='clang-analyzer-core.NullDereference' -- 2>&1 \
        | sed -E 's/[0-9]+ warnings? (and [0-9]+ errors? )?generated\./N warnings generated./' | out_as_work clang-tidy || true
    must_grep clang-tidy "error: Dereference of null pointer"
}

case_cppcheck() {
    project cppcheck && c_sources 50
    printf 'int last(void) {\n    int a[10];\n    for (int i = 0; i < 10; i++) a[i] = i;\n    return a[10];\n}\n' > src/u21.c
    cppcheck --enable=all --inconclusive src 2>&1 | out_as_work cppcheck || true
    must_grep cppcheck "[arrayIndexOutOfBounds]"
}

case_cmake() {
    project cmake
    {
        printf 'cmake_minimum_required(VERSION 3.20)\nproject(orders C)\ninclude(CheckIncludeFile)\n'
        for h in stdio stdlib string stdint stddef time errno signal limits locale math setjmp stdarg ctype assert \
            unistd fcntl dirent pthread sys/types sys/stat sys/time sys/socket netinet/in arpa/inet netdb poll sched \
            zlib lzma bzlib zstd openssl/ssl curl/curl expat uuid/uuid; do
            printf 'check_include_file(%s.h HAVE_%s_H)\n' "$h" "$(echo "${h^^}" | tr '/' '_')"
        done
        printf 'find_package(OrdersProtocol 2.1 REQUIRED)\nadd_executable(orders main.c)\n'
    } > CMakeLists.txt
    echo 'int main(void) { return 0; }' > main.c
    cmake -S . -B build 2>&1 | out_as_work cmake-configure || true
    must_grep cmake-configure "CMake Error at CMakeLists.txt:" 'By not providing "FindOrdersProtocol.cmake"' "Configuring incomplete, errors occurred!"
}

case_ninja() {
    project ninja && c_sources 80
    printf 'cmake_minimum_required(VERSION 3.20)\nproject(tool C)\nfile(GLOB SRC src/*.c)\nadd_executable(tool main.c ${SRC})\n' > CMakeLists.txt
    echo 'int main(void) { return 0; }' > main.c
    printf 'int total(int n) {\n    return n + missing_offset;\n}\n' > src/u17.c
    cmake -S . -B build -G Ninja >/dev/null
    ninja -C build -j1 -k 0 -v 2>&1 | sed -E 's/\[[0-9]+\/[0-9]+\]/[n\/N]/' | out_as_work ninja || true
    must_grep ninja "FAILED: " "missing_offset’ undeclared" "ninja: build stopped"
}

case_ctest() {
    project ctest
    printf 'cmake_minimum_required(VERSION 3.20)\nproject(t C)\nenable_testing()\nadd_executable(check check.c)\n' > CMakeLists.txt
    for name in parse_csv parse_json totals refunds currency rounding dates tax discounts shipping invoices exports; do
        for part in 1 2 3 4 5; do
            if [[ $name == rounding && $part != 3 ]]; then continue; fi
            suffix=$([[ $name == rounding ]] || echo "_$part")
            echo "add_test(NAME $name$suffix COMMAND check $name$suffix)" >> CMakeLists.txt
        done
    done
    cat > check.c <<'C'
#include <stdio.h>
#include <string.h>
int main(int argc, char **argv) {
    printf("running %s\n", argv[1]);
    if (strcmp(argv[1], "rounding") == 0) { fprintf(stderr, "rounding: expected 0.30, got 0.30000000000000004\n"); return 1; }
    return 0;
}
C
    cmake -S . -B build >/dev/null && cmake --build build >/dev/null
    (cd build && ctest --output-on-failure 2>&1) | sed -E 's/[0-9]+\.[0-9]+ sec/0.01 sec/g' | out_as_work ctest || true
    must_grep ctest "***Failed" "rounding: expected 0.30, got 0.30000000000000004" "tests passed, 1 tests failed out of 56"
}

case_meson() {
    project meson
    {
        printf "project('orders', 'c')\ncc = meson.get_compiler('c')\n"
        for f in printf malloc memcpy strlen strtol qsort bsearch fopen fclose fread fwrite time localtime strftime getenv setenv; do
            printf "cc.has_function('%s', prefix: '#include <stdlib.h>\\n#include <stdio.h>\\n#include <string.h>\\n#include <time.h>')\n" "$f"
        done
        printf "dep = dependency('orders-protocol', version: '>=2.1')\nexecutable('orders', 'main.c', dependencies: dep)\n"
    } > meson.build
    echo 'int main(void) { return 0; }' > main.c
    meson setup build 2>&1 | sed -E -e 's/[0-9]+\.[0-9]+ ?s\b/0.01s/g' | out_as_work meson-setup || true
    must_grep meson-setup "ERROR: Dependency \"orders-protocol\" not found"
}

case_autoconf() {
    project autoconf
    cat > configure.ac <<'AC'
AC_INIT([orders], [1.0])
AC_PROG_CC
AC_CHECK_HEADERS([stdio.h stdlib.h string.h stdint.h unistd.h fcntl.h sys/types.h sys/stat.h time.h errno.h])
AC_CHECK_FUNCS([malloc memcpy strlen strdup strtol qsort fopen fclose gettimeofday localtime_r strndup strnlen memmem \
  getline getdelim posix_memalign clock_gettime nanosleep pipe2 dup3 accept4 epoll_create1 inotify_init1 \
  pthread_setname_np sched_getaffinity getrandom arc4random reallocarray explicit_bzero strlcpy strlcat])
AC_CHECK_SIZEOF([long])
AC_CHECK_SIZEOF([void *])
AC_CHECK_SIZEOF([size_t])
AC_CHECK_LIB([ordersproto], [op_decode], [], [AC_MSG_ERROR([libordersproto is required: install it, or pass --with-ordersproto=DIR])])
AC_OUTPUT
AC
    autoconf >/dev/null 2>&1
    ./configure 2>&1 | out_as_work autoconf-configure || true
    must_grep autoconf-configure "configure: error: libordersproto is required"
}

case_bison() {
    project bison
    cat > calc.y <<'Y'
%token NUM
%%
expr: expr '+' expr
    | expr '*' expr
    | '(' expr ')'
    | expr '-' expr
    | expr '/' expr
    | '-' expr
    | NUM
    ;
%%
Y
    bison -Wall -Wcounterexamples calc.y 2>&1 | out_as_work bison || true
    must_grep bison "shift/reduce conflicts [-Wconflicts-sr]"
}

case_gcc_analyzer() {
    tuning
    project analyzer && c_sources 30
    cat > src/u5.c <<'C'
#include <stdlib.h>
void release(int *p, int again) {
    free(p);
    if (again)
        free(p);
}
C
    for f in src/*.c; do gcc -fanalyzer -Wall -c "$f" -o /dev/null 2>&1 || true; done | out_as_work gcc-analyzer || true
    must_grep gcc-analyzer "warning: double-‘free’ of ‘p’ [CWE-415]"
}

case_helgrind() {
    tuning
    project helgrind
    cat > race.c <<'C'
#include <pthread.h>
#include <stdio.h>
static int total;
static void *work(void *arg) { for (int i = 0; i < 1000; i++) total += 1; return arg; }
int main(void) {
    for (int i = 1; i <= 120; i++) printf("order %d queued\n", i);
    pthread_t a, b;
    pthread_create(&a, 0, work, 0); pthread_create(&b, 0, work, 0);
    pthread_join(a, 0); pthread_join(b, 0);
    printf("total %d\n", total);
    return 0;
}
C
    gcc -g -O0 -pthread race.c -o race
    valgrind --tool=helgrind ./race 2>&1 | sed -E -e 's/==[0-9]+==/==4242==/' -e 's/0x[0-9A-F]{6,}/0x4000000/g' | out_as_work helgrind || true
    must_grep helgrind "Possible data race during" "ERROR SUMMARY:"
}

case_gdb_threads() {
    tuning
    project gdb-threads
    cat > pool.c <<'C'
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>
static void *idle(void *arg) { for (;;) sleep(1); return arg; }
static int checksum(const int *rows, int n) { int sum = 0; for (int i = 0; i <= n; i++) sum += rows[i * 50000000L]; return sum; }
static void *crunch(void *arg) { int rows[4] = {1, 2, 3, 4}; printf("checksum %d\n", checksum(rows, 4)); return arg; }
int main(void) {
    pthread_t t[4];
    for (int i = 0; i < 3; i++) pthread_create(&t[i], 0, idle, 0);
    for (int i = 1; i <= 80; i++) printf("job %d scheduled\n", i);
    pthread_create(&t[3], 0, crunch, 0);
    pthread_join(t[3], 0);
    return 0;
}
C
    gcc -g -O0 -pthread pool.c -o pool
    gdb -q -batch -ex run -ex "thread apply all bt" ./pool 2>&1 \
        | sed -E -e 's/0x[0-9a-f]{8,}/0x7ffff7d00000/g' -e 's/Thread 0x[0-9a-f]+ \(LWP [0-9]+\)/Thread 0x7ffff7d00000 (LWP 4242)/g' -e 's/LWP [0-9]+/LWP 4242/g' -e 's/process [0-9]+/process 4242/g' \
        | grep -v "New Thread\|libthread_db\|Using host" | out_as_work gdb-threads || true
    must_grep gdb-threads "received signal SIGSEGV" "in checksum (rows="
}

# ---- Go, Ruby, PHP, Lua, Tcl: their runtimes and tools ----

go_module() { project "$1" && go mod init example.com/orders >/dev/null 2>&1; }

case_go_test() {
    go_module go-test
    printf 'package orders\n\nfunc Total(xs []int) int {\n\tt := 0\n\tfor _, x := range xs {\n\t\tt += x\n\t}\n\treturn t\n}\n\nfunc Discount(t int) int { return t - t/10 }\n' > orders.go
    {
        printf 'package orders\n\nimport "testing"\n\n'
        for i in $(seq 1 60); do printf 'func TestTotal%d(t *testing.T) {\n\tif Total([]int{%d, 1}) != %d {\n\t\tt.Fatal("bad")\n\t}\n}\n\n' "$i" "$i" "$((i + 1))"; done
        printf 'func TestDiscount(t *testing.T) {\n\tif got := Discount(96); got != 86 {\n\t\tt.Errorf("Discount(96) = %%d, want 86", got)\n\t}\n}\n'
    } > orders_test.go
    GOFLAGS=-mod=mod go test -v ./... 2>&1 | sed -E 's/[0-9]+\.[0-9]+s/0.00s/g' | out_as_work go-test || true
    must_grep go-test "--- FAIL: TestDiscount" "Discount(96) = 87, want 86" "FAIL	example.com/orders"
}

case_go_panic() {
    go_module go-panic
    cat > main.go <<'GO'
package main

import "fmt"

type Order struct{ Lines []int }

func lineTotal(o Order, i int) int { return o.Lines[i] * 3 }

func main() {
	orders := []Order{{Lines: []int{1, 2, 3}}}
	for i := 0; i < 100; i++ {
		fmt.Printf("order %d: %d lines\n", i, len(orders[0].Lines))
	}
	fmt.Println(lineTotal(orders[0], 5))
}
GO
    go run main.go 2>&1 | sed -E -e 's/\+0x[0-9a-f]+/+0x1d/g' | out_as_work go-panic || true
    must_grep go-panic "panic: runtime error: index out of range [5] with length 3" "goroutine 1 [running]:" "main.lineTotal("
}

case_go_vet() {
    go_module go-vet
    for i in $(seq 1 30); do
        mkdir -p "pkg$i"
        printf 'package pkg%d\n\nimport "fmt"\n\nfunc Show(n int) string { return fmt.Sprintf("%%d items", n) }\n' "$i" > "pkg$i/p.go"
    done
    printf 'package pkg7\n\nimport "fmt"\n\nfunc Name(s string) string { return fmt.Sprintf("%%d", s) }\n' > pkg7/q.go
    go vet -v ./... 2>&1 | out_as_work go-vet || true
    must_grep go-vet "fmt.Sprintf format %d has arg s of wrong type string"
}

case_go_race() {
    go_module go-race
    printf 'package orders\n\nvar count int\n\nfunc Add() { count++ }\n' > c.go
    {
        printf 'package orders\n\nimport (\n\t"sync"\n\t"testing"\n)\n\n'
        for i in $(seq 1 20); do printf 'func TestPlain%d(t *testing.T) {}\n' "$i"; done
        printf 'func TestConcurrent(t *testing.T) {\n\tvar wg sync.WaitGroup\n\tfor i := 0; i < 4; i++ {\n\t\twg.Add(1)\n\t\tgo func() { defer wg.Done(); Add() }()\n\t}\n\twg.Wait()\n}\n'
    } > c_test.go
    go test -race -v ./... 2>&1 | sed -E -e 's/0x[0-9a-f]+/0x00c000000000/g' -e 's/goroutine [0-9]+/goroutine 7/g' -e 's/[0-9]+\.[0-9]+s/0.00s/g' -e 's/\+0x[0-9a-f]+/+0x1d/g' | out_as_work go-race || true
    must_grep go-race "WARNING: DATA RACE" "--- FAIL: TestConcurrent"
}

case_ruby() {
    project ruby
    cat > import.rb <<'RB'
$stdout.sync = true
Row = Struct.new(:sku, :name)
def normalize(row)
  row.name.strip.upcase
end
def import(rows)
  rows.each_with_index do |row, i|
    puts "imported row #{i + 1}: #{normalize(row)}"
  end
end
rows = (1..150).map { |i| Row.new("SKU-#{i}", " item #{i} ") }
rows[137] = Row.new("SKU-138", nil)
import(rows)
RB
    ruby import.rb 2>&1 | out_as_work ruby-nomethod || true
    must_grep ruby-nomethod "undefined method \`strip' for nil:NilClass (NoMethodError)" "from import.rb:7:in \`import'"
}

case_php_fatal() {
    project php
    cat > invoice.php <<'PHP'
<?php
declare(strict_types=1);
function tax(float $amount): float { return $amount * 0.2; }
function line(array $row): float { return tax($row['amount']); }
for ($i = 1; $i <= 120; $i++) { echo "invoice line $i: ok\n"; }
echo line(['amount' => '12.50']), "\n";
PHP
    php invoice.php 2>&1 | out_as_work php-fatal || true
    must_grep php-fatal "PHP Fatal error:  Uncaught TypeError: tax(): Argument #1 (\$amount) must be of type float, string given" "Stack trace:" "#0 /work/php/invoice.php(4): tax("
}

case_php_lint() {
    project php-lint && mkdir src
    for i in $(seq 1 100); do printf '<?php\nfunction f%d($a) { return $a + %d; }\n' "$i" "$i" > "src/f$i.php"; done
    printf '<?php\nfunction broken($a) { return $a + ; }\n' > src/f61.php
    for f in src/*.php; do php -l "$f" 2>&1 || true; done | out_as_work php-lint || true
    must_grep php-lint "PHP Parse error:  syntax error" "Errors parsing src/f61.php"
}

case_lua() {
    project lua
    cat > jobs.lua <<'LUA'
local config = { workers = 4 }
local function limit(job) return job.settings.retries end
for i = 1, 120 do print(string.format("job %d queued on worker %d", i, i % config.workers)) end
print(limit({ name = "export" }))
LUA
    lua5.4 jobs.lua 2>&1 | out_as_work lua-error || true
    must_grep lua-error "attempt to index a nil value (field 'settings')" "stack traceback:"
}

case_tcl() {
    project tcl
    cat > build.tcl <<'TCL'
proc step {n} { puts "step $n: done" }
proc publish {target} {
    set url $registry/$target
    puts $url
}
for {set i 1} {$i <= 100} {incr i} { step $i }
publish orders
TCL
    tclsh build.tcl 2>&1 | out_as_work tcl-error || true
    must_grep tcl-error "can't read \"registry\": no such variable" "while executing"
}

# ---- shells, markup, archives ----

case_shellcheck() {
    project shellcheck && mkdir bin
    for i in $(seq 1 30); do printf '#!/bin/bash\nfor f in $(ls /var/log); do\n  echo $f\ndone\n' > "bin/s$i.sh"; done
    printf '#!/bin/bash\nif [ -f "$1" ]\n  echo found\nfi\n' > bin/s14.sh
    shellcheck bin/*.sh 2>&1 | out_as_work shellcheck || true
    must_grep shellcheck "In bin/s14.sh line" "(error): Expected 'then'." "(error): Couldn't parse this if expression."
}

case_xmllint() {
    project xmllint && mkdir feeds
    cat > price.xsd <<'XSD'
<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema">
  <xs:element name="item"><xs:complexType><xs:sequence>
    <xs:element name="sku" type="xs:string"/><xs:element name="price" type="xs:decimal"/>
  </xs:sequence></xs:complexType></xs:element>
</xs:schema>
XSD
    for i in $(seq 1 120); do printf '<item><sku>SKU-%d</sku><price>%d.50</price></item>\n' "$i" "$i" > "feeds/i$i.xml"; done
    printf '<item><sku>SKU-77</sku><price>twelve</price></item>\n' > feeds/i77.xml
    xmllint --noout --schema price.xsd feeds/*.xml 2>&1 | sort -V | out_as_work xmllint || true
    must_grep xmllint "'twelve' is not a valid value of the atomic type 'xs:decimal'" "feeds/i77.xml fails to validate"
}

case_tidy() {
    project tidy
    {
        printf '<!DOCTYPE html>\n<html><head><title>Catalog</title></head><body>\n'
        for i in $(seq 1 60); do printf '<div><img src="p%d.png"><font color="red">Item %d</font></div>\n' "$i" "$i"; done
        printf '<widget-slot>promo</widget-slot>\n</body></html>\n'
    } > catalog.html
    tidy -q -e --new-blocklevel-tags "" catalog.html 2>&1 | out_as_work tidy || true
    must_grep tidy "Error: <widget-slot> is not recognized!"
}

case_unzip() {
    project unzip && mkdir data
    for i in $(seq 1 150); do seq "$i" 200 > "data/part-$(printf %03d "$i").csv"; done
    zip -q -0 -r big.zip data
    python3 - <<'PY'
import zipfile
with zipfile.ZipFile("big.zip") as z:
    info = z.getinfo("data/part-042.csv")
with open("big.zip", "r+b") as f:
    f.seek(info.header_offset + 30 + len(info.filename) + len(info.extra) + 5)
    f.write(b"X")
PY
    unzip -t big.zip 2>&1 | out_as_work unzip-test || true
    must_grep unzip-test "data/part-042.csv" "At least one error was detected in big.zip."
}

case_openssl_verify() {
    tuning
    project openssl-verify
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout ca.key -out ca.pem -days 1 -subj "/CN=Orders CA" 2>/dev/null
    for i in $(seq 1 150); do
        openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "s$i.key" -out "s$i.csr" -subj "/CN=svc$i.internal" 2>/dev/null
        openssl x509 -req -in "s$i.csr" -CA ca.pem -CAkey ca.key -CAcreateserial -out "s$i.pem" -days 1 2>/dev/null
    done
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout rogue.key -out s23.pem -days 1 -subj "/CN=svc23.internal" 2>/dev/null
    for i in $(seq 1 150); do openssl verify -CAfile ca.pem "s$i.pem" 2>&1 || true; done | out_as_work openssl-verify || true
    must_grep openssl-verify "error 18 at 0 depth lookup: self-signed certificate" "error s23.pem: verification failed"
}

# ---- version control ----

case_git_fsck() {
    tuning
    project git-fsck && git init -q repo && cd repo
    git config user.email dev@example.org && git config user.name Dev
    for i in $(seq 1 60); do echo "line $i" > "f$i.txt"; git add "f$i.txt"; git commit -q -m "add f$i"; done
    blob=$(git rev-parse HEAD:f30.txt)
    chmod u+w ".git/objects/${blob:0:2}/${blob:2}" && : > ".git/objects/${blob:0:2}/${blob:2}"
    git fsck --full --verbose 2>&1 | out_as_work git-fsck || true
    must_grep git-fsck "is empty" "error: $blob: object corrupt or missing"
}

case_git_apply() {
    tuning
    project git-apply && git init -q repo && cd repo
    git config user.email dev@example.org && git config user.name Dev
    for i in $(seq 1 150); do seq 1 30 | sed "s/^/value $i /" > "m$i.txt"; done
    git add . && git commit -q -m base
    for i in $(seq 1 150); do sed -i "5s/.*/changed $i/" "m$i.txt"; done
    git diff > ../change.patch && git checkout -q .
    sed -i "5s/.*/edited upstream/" m22.txt && git commit -qam upstream
    git apply --check -v ../change.patch 2>&1 | out_as_work git-apply || true
    must_grep git-apply "error: patch failed: m22.txt:2" "error: m22.txt: patch does not apply"
}

# ---- databases ----

postgres_up() {
    project postgres
    chmod 755 "$work"
    local bin
    bin=$(ls -d /usr/lib/postgresql/*/bin | tail -1)
    chown -R postgres "$work/postgres"
    su postgres -c "$bin/initdb -D $work/postgres/data -A trust" >/dev/null
    su postgres -c "$bin/pg_ctl -D $work/postgres/data -o '-k $work/postgres -c listen_addresses=' -l $work/postgres/server.log start -w" >/dev/null
    # shellcheck disable=SC2064 # the paths of this run
    trap "su postgres -c '$bin/pg_ctl -D $work/postgres/data stop -m fast' >/dev/null 2>&1" EXIT
    pg="psql -h $work/postgres -U postgres -v ON_ERROR_STOP=1"
}

case_postgres() {
    tuning
    postgres_up
    {
        echo "CREATE TABLE users (id serial PRIMARY KEY, email text UNIQUE, name text);"
        for i in $(seq 1 150); do echo "INSERT INTO users (email, name) VALUES ('user$i@example.org', 'User $i');"; done
        echo "INSERT INTO users (email, name) VALUES ('user77@example.org', 'Again');"
    } > migrate.sql
    su postgres -c "$pg -f $work/postgres/migrate.sql" 2>&1 | out_as_work postgres-migrate || true
    must_grep postgres-migrate 'ERROR:  duplicate key value violates unique constraint "users_email_key"' "DETAIL:  Key (email)=(user77@example.org) already exists."
    {
        for i in $(seq 1 100); do echo "SELECT count(*) AS n$i FROM users WHERE id > $i;"; done
        echo "SELECT nme FROM users;"
    } > report.sql
    su postgres -c "$pg -f $work/postgres/report.sql" 2>&1 | out_as_work postgres-hint || true
    must_grep postgres-hint 'ERROR:  column "nme" does not exist' 'HINT:  Perhaps you meant to reference the column "users.name".'
    su postgres -c "$pg -c 'SELECT 1/0;'" >/dev/null 2>&1 || true
    # The server's own log: its tool (postgres) is held out.
    here="$tuning_dir/held-out"
    sed -E 's/^[0-9-]+ [0-9:.]+ [A-Z]+ \[[0-9]+\]/2026-12-02 08:00:00.000 UTC [4242]/' "$work/postgres/server.log" | out_as_work postgres-log
    must_grep postgres-log "ERROR:  division by zero" "STATEMENT:  SELECT 1/0;"
}

case_redis() {
    project redis
    redis-server --port 0 --unixsocket "$work/redis/r.sock" --daemonize yes --logfile "$work/redis/server.log" --dir "$work/redis" >/dev/null
    sleep 0.5
    {
        for i in $(seq 1 150); do echo "SET order:$i pending"; done
        echo "LPUSH order:77 shipped"
        for i in $(seq 1 20); do echo "GET order:$i"; done
    } > load.txt
    redis-cli -s "$work/redis/r.sock" < load.txt 2>&1 | out_as_work redis-cli || true
    redis-cli -s "$work/redis/r.sock" shutdown nosave >/dev/null 2>&1 || true
    must_grep redis-cli "WRONGTYPE Operation against a key holding the wrong kind of value"
}

# ---- the JVM, and the operating system's own ----

case_java_oom() {
    tuning
    project java-oom
    cat > Main.java <<'JAVA'
import java.util.ArrayList;
public class Main {
    static ArrayList<byte[]> cache = new ArrayList<>();
    static void fill(int batch) { for (int i = 0; i < 64; i++) cache.add(new byte[16 * 1024]); }
    public static void main(String[] args) {
        for (int batch = 1; ; batch++) { fill(batch); if (batch % 4 == 0) System.out.println("batch " + batch + ": " + cache.size() + " buffers"); }
    }
}
JAVA
    javac Main.java
    java -Xmx24m -Xlog:gc:stdout Main 2>&1 | sed -E -e 's/\[[0-9.]+s\]/[0.123s]/' -e 's/[0-9.]+ms/1.234ms/' | out_as_work java-oom || true
    must_grep java-oom "java.lang.OutOfMemoryError"
}

case_systemd_analyze() {
    project systemd && mkdir units
    for i in $(seq 1 30); do printf '[Unit]\nDescription=Worker %d\n[Service]\nExecStart=/bin/true\nUser=nobody\n[Install]\nWantedBy=multi-user.target\n' "$i" > "units/worker$i.service"; done
    printf '[Unit]\nDescription=Orders\n[Service]\nExecStrt=/usr/bin/orders\nRestart=always\n' > units/orders.service
    systemd-analyze verify units/*.service 2>&1 | out_as_work systemd-analyze || true
    must_grep systemd-analyze "Unknown key 'ExecStrt' in section [Service], ignoring." "Service has no ExecStart=, ExecStop=, or SuccessAction=. Refusing."
}

case_pydocstyle() {
    project pydocstyle && mkdir api
    for i in $(seq 1 40); do printf '"""Module %d."""\n\n\ndef get_%d(request):\n    """return the item"""\n    return request\n' "$i" "$i" > "api/m$i.py"; done
    printf '"""Module."""\n\n\ndef post(request):\n    """Create the item."""\n    return request\n\n\ndef delete(request):\n    return request\n' > api/m20.py
    pydocstyle --select=D103,D400,D403 api 2>&1 | out_as_work pydocstyle || true
    must_grep pydocstyle "api/m20.py:9 in public function \`delete\`:" "D103: Missing docstring in public function"
}

case_isort() {
    project isort && mkdir app
    for i in $(seq 1 120); do printf 'import os\nimport sys\n\nprint(os, sys)\n' > "app/m$i.py"; done
    printf 'import sys\nimport os\n\nprint(os, sys)\n' > app/m58.py
    isort --check-only --diff --verbose app 2>&1 | sort | out_as_work isort-check || true
    must_grep isort-check "ERROR: /work/isort/app/m58.py Imports are incorrectly sorted and/or formatted."
}

case_uv() {
    project uv && mkdir wheels
    # Four wheels, written as a wheel is laid out: alpha needs beta 1, gamma needs beta 2.
    python3 - <<'PY'
import zipfile
for name, version, needs in [("alpha", "1.0", "beta==1.0"), ("gamma", "1.0", "beta==2.0"), ("beta", "1.0", None), ("beta", "2.0", None)]:
    info = f"{name}-{version}.dist-info"
    meta = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n" + (f"Requires-Dist: {needs}\n" if needs else "")
    with zipfile.ZipFile(f"wheels/{name}-{version}-py3-none-any.whl", "w") as w:
        w.writestr(f"{name}/__init__.py", "")
        w.writestr(f"{info}/METADATA", meta)
        w.writestr(f"{info}/WHEEL", "Wheel-Version: 1.0\nGenerator: corpus\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        w.writestr(f"{info}/RECORD", "")
PY
    printf 'alpha\ngamma\n' > requirements.in
    uv pip compile --no-index --find-links wheels --no-cache requirements.in -v 2>&1 | sed -E 's/ [0-9.]+m?s/ 1ms/g' | out_as_work uv-resolve || true
    must_grep uv-resolve "No solution found when resolving dependencies" "cause: Because all versions of gamma depend on beta==2.0" "we can conclude that your requirements are unsatisfiable."
}

case_markdownlint() {
    project markdownlint && mkdir docs
    for i in $(seq 1 60); do printf '# Page %d\n\nA line that is long enough to pass the default limit of eighty characters by a little bit here.\n' "$i" > "docs/p$i.md"; done
    printf '# Guide\n\n### Install\n\nSteps.\n' > docs/p31.md
    markdownlint docs 2>&1 | sort -V | out_as_work markdownlint || true
    must_grep markdownlint "MD001/heading-increment"
}

case_htmlhint() {
    project htmlhint && mkdir site
    for i in $(seq 1 50); do printf '<!DOCTYPE html>\n<html><head><title>P%d</title></head><body><img src="a.png"><DIV>x</DIV></body></html>\n' "$i" > "site/p$i.html"; done
    printf '<!DOCTYPE html>\n<html><head><title>Q</title></head><body><div id="a"></div><div id="a"></div></body></html>\n' > site/p9.html
    htmlhint --nocolor site 2>&1 | sed -E 's/\([0-9]+ ms\)/(1 ms)/' | out_as_work htmlhint || true
    must_grep htmlhint "site/p9.html" 'The id value [ a ] must be unique.'
}

case_xz() {
    project xz && mkdir logs
    for i in $(seq 1 80); do seq 1 500 > "logs/day$i.log"; xz "logs/day$i.log"; done
    printf 'not xz' >> logs/day44.log.xz
    xz -tv logs/*.xz 2>&1 | sed -E 's/[0-9.]+ (KiB|MiB)\/s/1.0 MiB\/s/g' | out_as_work xz-test || true
    must_grep xz-test "logs/day44.log.xz: Unexpected end of input" "logs/day44.log.xz: File format not recognized" "logs/day44.log.xz: Compressed data is corrupt"
}

case_zstd() {
    project zstd && mkdir dumps
    for i in $(seq 1 80); do seq 1 800 | zstd -q -o "dumps/t$i.zst"; done
    printf '\x28\xb5\x2f\xfd\x00\x58garbage' > dumps/t61.zst
    zstd -tv dumps/*.zst 2>&1 | out_as_work zstd-test || true
    must_grep zstd-test "dumps/t61.zst : "
}

case_gpg() {
    project gpg && export GNUPGHOME="$work/gpg/home" && mkdir -m 700 home releases
    gpg --batch --quiet --passphrase '' --quick-gen-key "Release Bot <release@example.org>" ed25519 sign never 2>/dev/null
    for i in $(seq 1 40); do echo "artifact $i" > "releases/a$i.tar"; gpg --batch --quiet --detach-sign "releases/a$i.tar"; done
    echo tampered >> releases/a27.tar
    for i in $(seq 1 40); do gpg --verify "releases/a$i.tar.sig" "releases/a$i.tar" 2>&1 || true; done \
        | sed -E -e 's/Signature made .*/Signature made Wed Dec  2 08:00:00 2026 UTC/' -e 's/using EDDSA key [0-9A-F]+/using EDDSA key 0123456789ABCDEF0123456789ABCDEF01234567/' -e 's/"Release Bot <release@example.org>" \[[a-z]+\]/"Release Bot <release@example.org>" [ultimate]/' \
        | out_as_work gpg-verify || true
    unset GNUPGHOME
    must_grep gpg-verify 'BAD signature from "Release Bot <release@example.org>"'
}

case_ssh() {
    project ssh
    ssh -vvv -o BatchMode=yes -o StrictHostKeyChecking=no -o ConnectTimeout=5 -p 1 deploy@127.0.0.1 true 2>&1 \
        | sed -E 's/pid = [0-9]+/pid = 4242/' | out_as_work ssh-refused || true
    must_grep ssh-refused "ssh: connect to host 127.0.0.1 port 1: Connection refused"
}

case_wget() {
    project wget && mkdir site
    for i in $(seq 1 60); do echo "page $i" > "site/p$i.html"; done
    python3 -m http.server 0 --bind 127.0.0.1 --directory site > server.log 2>&1 &
    local server=$! port=
    for _ in $(seq 50); do port=$(grep -o 'port [0-9]*' server.log | grep -o '[0-9]*' || true); [[ -n $port ]] && break; sleep 0.1; done
    : > urls.txt
    for i in $(seq 1 60); do echo "http://127.0.0.1:$port/p$i.html" >> urls.txt; done
    echo "http://127.0.0.1:$port/p61.html" >> urls.txt
    wget -nv -i urls.txt -P fetched 2>&1 | sed -E -e "s/127.0.0.1:$port/127.0.0.1:8000/g" -e 's/^[0-9-]+ [0-9:]+/2026-12-02 08:00:00/' | out_as_work wget || true
    kill "$server" 2>/dev/null || true
    must_grep wget "http://127.0.0.1:8000/p61.html:" "ERROR 404: File not found."
}

case_awk() {
    project awk
    for i in $(seq 1 200); do echo "order-$i $((i == 150 ? 0 : i % 7 + 1)) $((i * 3))"; done > orders.txt
    gawk '{ printf "%s: %d per item\n", $1, $3 / $2; fflush() }' orders.txt 2>&1 | out_as_work gawk-fatal || true
    must_grep gawk-fatal "fatal: division by zero attempted"
}

case_dpkg_deb() {
    project dpkg && mkdir -p pkgs
    for i in $(seq 1 30); do
        mkdir -p "build$i/DEBIAN" "build$i/usr/share/orders$i"
        printf 'Package: orders-%d\nVersion: 1.%d\nArchitecture: all\nMaintainer: Dev <dev@example.org>\nDescription: part %d\n' "$i" "$i" "$i" > "build$i/DEBIAN/control"
        echo data > "build$i/usr/share/orders$i/data"
        dpkg-deb --build "build$i" "pkgs/orders-$i.deb" >/dev/null
    done
    head -c 400 pkgs/orders-12.deb > pkgs/cut.deb && mv pkgs/cut.deb pkgs/orders-12.deb
    for f in pkgs/*.deb; do echo "== $f"; dpkg-deb --info "$f" 2>&1 || true; done | out_as_work dpkg-deb || true
    must_grep dpkg-deb "dpkg-deb: error:"
}

case_nginx_t() {
    tuning
    project nginx-t
    {
        printf 'events {}\nhttp {\n'
        for i in $(seq 1 40); do printf '  server {\n    listen 127.0.0.1:%d;\n    location / { proxy_pass http://127.0.0.1:%d; }\n  }\n' "$((18000 + i))" "$((19000 + i))"; done
        printf '  server {\n    listen 127.0.0.1:18100;\n    location /api { proxy_passs http://127.0.0.1:19100; }\n  }\n}\n'
    } > nginx.conf
    /usr/sbin/nginx -t -p "$work/nginx-t" -c "$work/nginx-t/nginx.conf" -g "error_log stderr debug;" 2>&1 | sed -E 's/^[0-9/]+ [0-9:]+ /2026\/12\/02 08:00:00 /; s/[0-9]+#[0-9]+:/4242#0:/' | out_as_work nginx-t || true
    must_grep nginx-t 'unknown directive "proxy_passs"' "configuration file /work/nginx-t/nginx.conf test failed"
}

case_ltrace() {
    project ltrace
    cat > load.c <<'C'
#include <stdio.h>
#include <stdlib.h>
int main(void) {
    char name[32];
    for (int i = 1; i <= 60; i++) { snprintf(name, sizeof name, "/proc/self/stat"); FILE *f = fopen(name, "r"); if (f) fclose(f); }
    FILE *plugin = fopen("/usr/lib/orders/plugins.conf", "r");
    if (!plugin) { perror("orders: plugins.conf"); return 2; }
    return 0;
}
C
    gcc -O0 load.c -o load
    ltrace -e fopen+fclose+perror ./load 2>&1 | sed -E 's/0x[0-9a-f]+/0x55d000000000/g' | out_as_work ltrace || true
    must_grep ltrace 'fopen("/usr/lib/orders/plugins.conf", "r")' "perror(\"orders: plugins.conf\"" "+++ exited (status 2) +++"
}

main() {
    tools
    local cases=("$@")
    if ((${#cases[@]} == 0)); then
        mapfile -t cases < <(declare -F | awk '{print $3}' | sed -n 's/^case_//p')
    fi
    for name in "${cases[@]}"; do
        echo "== $name" >&2
        (cd "$work" && "case_$name")
    done
}
main "$@"
