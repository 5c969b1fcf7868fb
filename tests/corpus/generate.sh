#!/usr/bin/env bash
# Regenerates the corpus of real tool outputs the keep-what-matters tests and bench read: each
# `<name>.out` is what a real tool printed (stdout and stderr merged, as run_command merges them),
# each `<name>.must` the lines of it a developer must see, one per line.
#
# Run it by hand (it needs cargo, gcc, make, python3, node, javac and java; pytest is installed
# into a throwaway virtualenv from PyPI, pinned); the outputs are committed, so the tests and the
# bench need none of these tools.
#
#   bash tests/corpus/generate.sh
set -euo pipefail
# shellcheck source=tests/corpus/lib.sh
source "$(dirname "$0")/lib.sh"

# 1. cargo test --no-fail-fast over a workspace whose first crate has one failing test.
mkdir -p "$work/ws" && cd "$work/ws"
cat > Cargo.toml <<'TOML'
[workspace]
members = ["alpha", "beta", "gamma"]
resolver = "2"
TOML
for krate in alpha beta gamma; do
    mkdir -p "$krate/src"
    printf '[package]\nname = "%s"\nversion = "0.1.0"\nedition = "2021"\n' "$krate" > "$krate/Cargo.toml"
    {
        echo "pub fn double(x: u64) -> u64 { x * 2 }"
        echo "#[cfg(test)]"
        echo "mod tests {"
        echo "    use super::*;"
        for i in $(seq 1 400); do
            echo "    #[test] fn case_$i() { assert_eq!(double($i), $((i * 2))); }"
        done
        if [ "$krate" = alpha ]; then
            echo "    #[test] fn broken() { let total = double(2) + 1; assert_eq!(total, 4, \"the total of the order\"); }"
        fi
        echo "}"
    } > "$krate/src/lib.rs"
done
cargo test --no-fail-fast --color never 2>&1 | out cargo-test || true
must_grep cargo-test "test tests::broken ... FAILED" "panicked at alpha/src/lib.rs" "the total of the order" "  left: 5" " right: 4" "test result: FAILED"

# 2. cargo build --color always: warnings, then an error.
mkdir -p "$work/colour/src" && cd "$work/colour"
printf '[package]\nname = "colour"\nversion = "0.1.0"\nedition = "2021"\n' > Cargo.toml
{
    for i in $(seq 1 40); do echo "fn helper_$i() { let unused_$i = $i; }"; done
    echo 'fn main() { let count: u32 = "three"; println!("{count}"); }'
} > src/main.rs
cargo build --color always 2>&1 | out cargo-build-colour || true
# The must-see lines are the error's, as a terminal shows them (escape sequences removed).
sed 's/\x1b\[[0-9;]*m//g' "$here/cargo-build-colour.out" > "$work/plain"
grep -F -e "error[E0308]: mismatched types" -e "src/main.rs:41:" "$work/plain" > "$here/cargo-build-colour.must"

# 3. make -k with gcc: 90 files, an error in file 31, warnings throughout.
mkdir -p "$work/c" && cd "$work/c"
for i in $(seq 1 90); do
    if [ "$i" = 31 ]; then
        printf 'int unit_%d(int x) {\n    int unused = 1;\n    return x + undefined_total;\n}\n' "$i" > "unit$i.c"
    else
        printf 'int unit_%d(int x) {\n    int unused = %d;\n    return x * %d;\n}\n' "$i" "$i" "$i" > "unit$i.c"
    fi
done
printf 'CFLAGS = -Wall -Wextra -c\nOBJS = %s\nall: $(OBJS)\n%%.o: %%.c\n\tgcc $(CFLAGS) $< -o $@\n' \
    "$(seq -f 'unit%g.o' 1 90 | tr '\n' ' ')" > Makefile
make -k 2>&1 | out make-gcc || true
must_grep make-gcc "unit31.c:3:16: error:" "make: *** [Makefile:5: unit31.o] Error 1"

# 4. A service log of 12,000 lines with a Python traceback at line 6,400.
cat > "$work/service.py" <<'PY'
import logging, sys
logging.basicConfig(stream=sys.stdout, level=logging.INFO,
                    format="2026-11-23 10:%(minutes)s %(levelname)s [%(name)s] %(message)s")
log = logging.getLogger("orders")
def parse(record):
    return int(record["quantity"])
n = 0
def emit(level, message, **extra):
    global n
    n += 1
    extra.setdefault("minutes", f"{n // 600:02d}:{n % 60:02d}")
    log.log(level, message, extra=extra)
while n < 6395:
    emit(logging.INFO, f"synced batch {n}: {n % 17 + 3} orders in {n % 90 + 10}ms")
try:
    parse({"quantity": "twelve"})
except ValueError:
    n += 1
    log.exception("batch %d failed", n, extra={"minutes": "10:40"})
while n < 11990:
    emit(logging.INFO, f"synced batch {n}: {n % 17 + 3} orders in {n % 90 + 10}ms")
PY
python3 "$work/service.py" 2>&1 | out python-log
must_grep python-log "ERROR [orders] batch" "Traceback (most recent call last):" "ValueError: invalid literal for int() with base 10: 'twelve'"

# 5. node --test with one failure in the middle.
mkdir -p "$work/node" && cd "$work/node"
{
    echo "const test = require('node:test'); const assert = require('node:assert');"
    for i in $(seq 1 300); do
        if [ "$i" = 150 ]; then
            echo "test('totals the cart', () => { assert.strictEqual(2 + 2, 5); });"
        else
            echo "test('case $i', () => { assert.strictEqual($i + 1, $((i + 1))); });"
        fi
    done
} > cart.test.js
node --test --test-reporter=tap cart.test.js 2>&1 | out node-test || true
must_grep node-test "not ok 150 - totals the cart" "Expected values to be strictly equal:"

# 6. pytest -v with one failure in the middle (pytest from PyPI, pinned).
python3 -m venv "$work/venv"
"$work/venv/bin/pip" install --quiet pytest==8.3.4
mkdir -p "$work/py" && cd "$work/py"
{
    echo "import pytest"
    for i in $(seq 1 400); do
        if [ "$i" = 200 ]; then
            echo "def test_invoice_total(): assert sum([10, 20, 30]) == 61"
        else
            echo "def test_case_$i(): assert $i + 1 == $((i + 1))"
        fi
    done
} > test_shop.py
"$work/venv/bin/pytest" -v -p no:cacheprovider test_shop.py 2>&1 | out pytest || true
must_grep pytest "test_shop.py::test_invoice_total FAILED" "assert 60 == 61"

# 7. A Java program that overflows its stack: the same frame a thousand times.
mkdir -p "$work/java" && cd "$work/java"
cat > Main.java <<'JAVA'
public class Main {
    static int depth(int n) { return depth(n + 1) + 1; }
    public static void main(String[] args) {
        for (int i = 0; i < 200; i++) System.out.println("loaded module " + i + " in " + (i % 7 + 1) + " ms");
        depth(0);
    }
}
JAVA
javac Main.java
java -Xss256k Main 2>&1 | out java-stack || true
must_grep java-stack 'Exception in thread "main" java.lang.StackOverflowError'

# 8. javac with lint warnings on 60 files and an error in file 31.
mkdir -p "$work/javac" && cd "$work/javac"
for i in $(seq 1 60); do
    if [ "$i" = 31 ]; then
        printf 'import java.util.*;\npublic class Unit%d {\n    List raw = new ArrayList();\n    int total() { return missingTotal; }\n}\n' "$i" > "Unit$i.java"
    else
        printf 'import java.util.*;\npublic class Unit%d {\n    List raw = new ArrayList();\n    int total() { return %d; }\n}\n' "$i" "$i" > "Unit$i.java"
    fi
done
javac -Xlint:all -Xmaxwarns 1000 Unit*.java 2>&1 | out javac || true
must_grep javac "Unit31.java:4: error: cannot find symbol"

# 9. git clone --progress: carriage-return redraws of the progress lines.
mkdir -p "$work/origin" && cd "$work/origin"
git init -q && git config user.email t@example.invalid && git config user.name t
for i in $(seq 1 400); do printf 'file %d\n%s\n' "$i" "$(head -c 2000 /dev/urandom | base64)" > "f$i.txt"; done
git add -A && git commit -qm init
cd "$work" && git clone --progress --no-local origin clone 2>&1 | out git-clone || true
must_grep git-clone "Cloning into 'clone'..."
sed 's/.*\r//' "$here/git-clone.out" | grep -F -e "Receiving objects: 100%" >> "$here/git-clone.must" || true

echo "corpus written to $here"
