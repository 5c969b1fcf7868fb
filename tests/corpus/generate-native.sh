#!/usr/bin/env bash
# The corpus wider still: what an agent reads when native code crashes or leaks (valgrind, gdb,
# strace, AddressSanitizer, UBSan, ldd), when Rust's other tools speak (cargo-nextest, rustfmt,
# rustdoc), and what everyday tools print on a bad day (tar, openssl, curl, git merge and
# bisect, yq, Python's compileall and doctest, g++, Maven offline, npm ci). Every output is the
# real tool's, run here on a program or project made for it, with one failure (or two) among
# routine lines; the lines a developer must see are the failure's.
#
# Run it by hand (it needs gcc, g++, valgrind, gdb, strace, cargo with cargo-nextest, tar,
# openssl, curl, git, yq, python3, mvn and npm); the outputs are committed, so the tests and the
# signal gate need none of these tools.
#
#   bash tests/corpus/generate-native.sh
set -euo pipefail
# shellcheck source=tests/corpus/lib.sh
source "$(dirname "$0")/lib.sh"

# An output with the scratch folder's path written as /work (it changes from run to run).
out_as_work() { sed "s|$work|/work|g" | out "$1"; }

# A C program that logs its work, record by record, and fails on record 117 as $1 says.
c_program() {
    local name="$1" failure="$2"
    mkdir -p "$work/c" && cd "$work/c"
    cat > "$name.c" <<C
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static int parse_header(const char *buf) { return buf[0] == '#'; }
static void fill_totals(int *totals, int n) { for (int i = 0; i <= n; i++) totals[i] = i * 3; }
static int scale(int x) { return x * 1000000; }
int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    for (int i = 1; i <= 240; i++) {
        printf("processed record %d: 12 fields, checksum ok\n", i);
        if (i == 117) { $failure }
    }
    printf("done: 240 records\n");
    return 0;
}
C
}

# valgrind memcheck: a read of freed memory and a leak.
c_program memcheck 'int *p = malloc(40); free(p); printf("total %d\n", p[3]); char *leak = malloc(40); strcpy(leak, "kept"); leak = NULL;'
gcc -g -O0 -Wno-use-after-free memcheck.c -o memcheck
valgrind --leak-check=full ./memcheck 2>&1 | sed 's/==[0-9]*==/==4242==/' | out_as_work valgrind-memcheck || true
must_grep valgrind-memcheck "Invalid read of size 4" "are definitely lost in loss record" "ERROR SUMMARY: 2 errors"

# gdb: a segmentation fault, its backtrace.
c_program segv 'parse_header(NULL);'
gcc -g -O0 segv.c -o segv
gdb -q -batch -ex run -ex bt ./segv 2>&1 | out_as_work gdb-segfault || true
must_grep gdb-segfault "received signal SIGSEGV" "#0  " "#1  "

# strace: the file a program could not open, among the calls it made.
mkdir -p "$work/c" && cd "$work/c"
cat > config.c <<'C'
#include <stdio.h>
#include <stdlib.h>
int main(void) {
    char path[64];
    for (int i = 0; i < 150; i++) {
        snprintf(path, sizeof path, "/proc/self/status");
        FILE *f = fopen(path, "r");
        char line[256];
        if (f) { while (fgets(line, sizeof line, f)) {} fclose(f); }
    }
    FILE *config = fopen("/etc/orders/config.toml", "r");
    if (!config) { perror("orders: /etc/orders/config.toml"); return 1; }
    return 0;
}
C
gcc -O0 config.c -o config
strace -e trace=openat,read,close,exit_group ./config 2>&1 | out_as_work strace-enoent || true
must_grep strace-enoent '"/etc/orders/config.toml", O_RDONLY) = -1 ENOENT' "orders: /etc/orders/config.toml: No such file or directory" "+++ exited with 1 +++"

# AddressSanitizer: a write one past the end of a heap array.
c_program asan 'int *totals = malloc(8 * sizeof(int)); fill_totals(totals, 8); free(totals);'
gcc -g -O0 -fsanitize=address asan.c -o asan
ASAN_OPTIONS=detect_leaks=0 ./asan 2>&1 | sed -E 's/==[0-9]+==/==4242==/' | out_as_work asan-heap-overflow || true
must_grep asan-heap-overflow "ERROR: AddressSanitizer: heap-buffer-overflow" "in fill_totals" "SUMMARY: AddressSanitizer"

# UBSan: a signed overflow, reported and run past.
c_program ubsan 'printf("scaled %d\n", scale(i * 40000));'
gcc -g -O0 -fsanitize=undefined ubsan.c -o ubsan
./ubsan 2>&1 | out_as_work ubsan-overflow || true
must_grep ubsan-overflow "runtime error: signed integer overflow"

# ldd: a program whose shared library is gone.
cat > libledger.c <<'C'
int ledger_total(int x) { return x * 2; }
C
cat > uses.c <<'C'
int ledger_total(int);
int main(void) { return ledger_total(1) - 2; }
C
gcc -shared -fPIC libledger.c -o libledger.so.1
gcc uses.c -o uses -L. -l:libledger.so.1
rm libledger.so.1
ldd ./uses 2>&1 | sed -E 's/ \(0x[0-9a-f]+\)//' | out_as_work ldd-missing || true
must_grep ldd-missing "libledger.so.1 => not found"

# g++: a template error, as long as they are.
mkdir -p "$work/cpp" && cd "$work/cpp"
cat > ledger.cpp <<'CPP'
#include <map>
#include <string>
#include <vector>
#include <algorithm>
struct Entry { std::string account; long cents; };
int main() {
    std::map<std::string, long> totals;
    std::vector<Entry> entries{{"cash", 100}, {"bank", 250}};
    for (const auto &e : entries) totals[e.account] += e.cents;
    std::sort(totals.begin(), totals.end());
    totals.insert(42);
    return 0;
}
CPP
g++ -std=c++17 -c ledger.cpp 2>&1 | out_as_work gpp-template || true
must_grep gpp-template "ledger.cpp:10:14:   required from here" "ledger.cpp:11:18: error: no matching function for call to"

# cargo-nextest: 300 tests, one failing.
mkdir -p "$work/nextest/src" && cd "$work/nextest"
printf '[package]\nname = "ledger"\nversion = "0.1.0"\nedition = "2021"\n' > Cargo.toml
{
    echo "pub fn balance(x: i64) -> i64 { x - 1 }"
    echo "#[cfg(test)]"
    echo "mod tests {"
    echo "    use super::*;"
    for i in $(seq 1 300); do
        echo "    #[test] fn posts_entry_$i() { assert!(balance($i) < $i); }"
    done
    echo "    #[test] fn closes_the_month() { assert_eq!(balance(10), 10, \"the month's closing balance\"); }"
    echo "}"
} > src/lib.rs
cargo build --tests --quiet 2>/dev/null
cargo nextest run --color never --no-fail-fast 2>&1 | sed -E 's/\[ *[0-9.]+s\]/[ 0.004s]/' | out_as_work cargo-nextest || true
must_grep cargo-nextest "FAIL [" "the month's closing balance" "1 failed"

# rustfmt: cargo fmt --check over a crate with three unformatted spots.
cd "$work/nextest"
{
    for i in $(seq 1 60); do
        echo "pub fn posting_$i(x: i64) -> i64 { x + $i }"
    done
} > src/postings.rs
echo "pub mod postings;" >> src/lib.rs
sed -i 's/^pub fn posting_20(x: i64) -> i64 { x + 20 }$/pub fn posting_20(x:i64)->i64{x+20}/; s/^pub fn posting_45(x: i64) -> i64 { x + 45 }$/pub fn   posting_45(x: i64) -> i64 {x + 45}/' src/postings.rs
cargo fmt --check 2>&1 | sed "s|$work|/work|" | out_as_work cargo-fmt-check || true
must_grep cargo-fmt-check "Diff in"

# rustdoc: missing docs warned, a broken link denied.
mkdir -p "$work/doc/src" && cd "$work/doc"
printf '[package]\nname = "ledger-doc"\nversion = "0.1.0"\nedition = "2021"\n' > Cargo.toml
{
    echo "//! The ledger."
    echo "#![warn(missing_docs)]"
    echo "#![deny(rustdoc::broken_intra_doc_links)]"
    for i in $(seq 1 40); do
        echo "pub fn account_$i() -> u32 { $i }"
    done
    echo "/// Closes the month; see [\`Ledger::reopen\`]."
    echo "pub fn close_month() {}"
} > src/lib.rs
cargo doc --no-deps --color never 2>&1 | sed "s|$work|/work|" | out_as_work rustdoc-broken-link || true
must_grep rustdoc-broken-link "error: unresolved link to \`Ledger::reopen\`"

# tar: 1,500 files extracted, one where a file stands in the way of a directory.
mkdir -p "$work/tar/src/data/reports" && cd "$work/tar/src"
for i in $(seq 1 1500); do
    d="data/batch-$((i % 30))"
    mkdir -p "$d" && echo "row $i" > "$d/part-$i.csv"
done
echo "q3" > data/reports/2026-q3.csv
tar -cf ../export.tar data
# A restore over a partial one, keeping what is there: one file was restored already.
mkdir -p ../restore/data/batch-7 && cd ../restore && echo "row 1327" > data/batch-7/part-1327.csv
tar -xkvf ../export.tar 2>&1 | out_as_work tar-extract || true
must_grep tar-extract "Cannot open: File exists" "Exiting with failure status"

# openssl s_client: a server's self-signed certificate, its chain shown.
mkdir -p "$work/tls" && cd "$work/tls"
openssl req -x509 -newkey rsa:2048 -nodes -keyout key.pem -out cert.pem -days 30 -subj "/CN=orders.internal" 2>/dev/null
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
openssl s_server -accept "127.0.0.1:$port" -cert cert.pem -key key.pem -www -quiet &
server=$!
sleep 1
openssl s_client -connect "127.0.0.1:$port" -showcerts -servername orders.internal < /dev/null 2>&1 | sed "s/127.0.0.1:$port/127.0.0.1:8443/" | out_as_work openssl-s-client || true
kill "$server"
must_grep openssl-s-client "verify error:num=18:self-signed certificate" "Verify return code: 18 (self-signed certificate)"

# curl: a 503 with a long HTML body, --fail-with-body.
mkdir -p "$work/http" && cd "$work/http"
cat > server.py <<'PY'
import http.server, sys
class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        rows = "".join(f"<tr><td>shard-{i}</td><td>healthy</td><td>{i * 7 % 90} ms</td></tr>\n" for i in range(300))
        body = f"<html><body><h1>Orders API</h1><table>\n{rows}</table><p>upstream ledger: timed out after 30s</p></body></html>\n".encode()
        self.send_response(503)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *args):
        pass
server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
server.handle_request()
PY
coproc SERVER { python3 server.py; }
read -r port <&"${SERVER[0]}"
curl -sS -v --fail-with-body "http://127.0.0.1:$port/status" 2>&1 | sed "s/127.0.0.1:$port/127.0.0.1:8080/; s/port $port/port 8080/" | grep -v '^< Date:\|^\* *Trying' | out_as_work curl-fail || true
wait "$SERVER_PID" 2>/dev/null || true
must_grep curl-fail "< HTTP/1.0 503 Service Unavailable" "upstream ledger: timed out after 30s" "curl: (22)"

# git merge: two branches that both changed one file, among 200 merged cleanly.
mkdir -p "$work/merge" && cd "$work/merge"
git init -q -b main . && git config user.email dev@example.com && git config user.name dev
mkdir -p src && for i in $(seq 1 200); do printf 'line one\nline two\nline three\n' > "src/module_$i.py"; done
printf 'TAX = 0.19\n' > src/orders.py
git add -A && git commit -qm base
git checkout -qb feature
for i in $(seq 1 200); do printf 'line one\nline two\nline three\nfeature %d\n' "$i" > "src/module_$i.py"; done
printf 'TAX = 0.21\n' > src/orders.py
git commit -qam feature
git checkout -q main
for i in $(seq 1 200); do printf 'header %d\nline one\nline two\nline three\n' "$i" > "src/module_$i.py"; done
printf 'TAX = 0.20\n' > src/orders.py
git commit -qam main
git merge feature 2>&1 | out_as_work git-merge-conflict || true
must_grep git-merge-conflict "CONFLICT (content): Merge conflict in src/orders.py" "Automatic merge failed"

# git bisect run: 120 commits, the first bad one found.
mkdir -p "$work/bisect" && cd "$work/bisect"
git init -q -b main . && git config user.email dev@example.com && git config user.name dev
for i in $(seq 1 120); do
    if [ "$i" -ge 83 ]; then echo "exit 1" > check.sh; else echo "exit 0" > check.sh; fi
    echo "$i" > version && git add -A && git commit -qm "orders: change $i"
done
git bisect start HEAD "$(git rev-list --max-parents=0 HEAD)" > /dev/null
git bisect run sh check.sh 2>&1 | out_as_work git-bisect || true
must_grep git-bisect "is the first bad commit" "orders: change 83"

# yq: a YAML document printed, then one that does not parse.
mkdir -p "$work/yaml" && cd "$work/yaml"
python3 - <<'PY'
with open("deploy.yaml", "w") as f:
    f.write("services:\n")
    for i in range(120):
        f.write(f"  svc-{i}:\n    image: registry.local/svc-{i}:1.{i % 9}\n    replicas: {i % 4 + 1}\n")
with open("broken.yaml", "w") as f:
    f.write("services:\n  api:\n    image: registry.local/api:2.0\n    env: PORT: 8080\n")
PY
yq '.services' deploy.yaml broken.yaml 2>&1 | out_as_work yq-error || true
must_grep yq-error "mapping values are not allowed in this context" 'in "broken.yaml", line 4, column 14.'

# python -m compileall: 300 modules, one with a syntax error.
mkdir -p "$work/py/src" && cd "$work/py"
for i in $(seq 1 300); do printf 'def f_%d(x):\n    return x + %d\n' "$i" "$i" > "src/m$i.py"; done
printf 'def total(items)\n    return sum(items)\n' > src/m117.py
python3 -m compileall src 2>&1 | out_as_work python-compileall || true
must_grep python-compileall '***   File "src/m117.py", line 1' "SyntaxError: expected ':'"

# python -m doctest -v: 200 examples, one failing.
cd "$work/py"
{
    echo '"""Orders.'
    echo
    for i in $(seq 1 200); do
        printf '>>> total([%d, 1])\n%d\n' "$i" "$((i + 1))"
    done
    echo '>>> total([2, 2], shipping=1)'
    echo '5'
    echo '"""'
    echo 'def total(items, shipping=0):'
    echo '    return sum(items)'
} > orders.py
python3 -m doctest -v orders.py 2>&1 | out_as_work python-doctest || true
must_grep python-doctest 'File "/work/py/orders.py", line 403, in orders' "Failed example:" "***Test Failed*** 1 failures."

# mvn, offline with an empty repository: the build's plugins cannot be resolved.
mkdir -p "$work/mvn/src/main/java/shop" && cd "$work/mvn"
cat > pom.xml <<'XML'
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>shop</groupId>
  <artifactId>billing</artifactId>
  <version>1.4.0</version>
  <properties><maven.compiler.release>17</maven.compiler.release></properties>
</project>
XML
echo 'package shop; public class Invoice {}' > src/main/java/shop/Invoice.java
mvn -o -B -Dmaven.repo.local="$work/m2" package 2>&1 | sed "s|$work|/work|g" | out_as_work mvn-offline || true
must_grep mvn-offline "[ERROR] Plugin org.apache.maven.plugins:maven-resources-plugin"

# npm install offline, a package not in the cache: what an agent without the network reads.
mkdir -p "$work/npm" && cd "$work/npm"
cat > package.json <<'JSON'
{ "name": "shop-web", "version": "1.0.0", "dependencies": { "left-pad": "^1.3.0" } }
JSON
npm install --offline --no-audit --no-fund --cache "$work/npm-cache" 2>&1 | sed -E 's|_logs/[^ ]*-debug-0.log|_logs/2026-11-28T10_00_00_000Z-debug-0.log|' | out_as_work npm-offline || true
must_grep npm-offline "npm error code ENOTCACHED" "npm error request to https://registry.npmjs.org/left-pad failed"
