#!/usr/bin/env bash
# The corpus as wide as the field: real outputs of the tools developers run most, beside the nine
# of generate.sh. Each `<name>.out` is what the tool printed (stdout and stderr merged, as
# run_command merges them), each `<name>.must` the lines a developer reading it must see.
#
# Every output is made by running the real tool, except where the tool cannot be installed
# here; those are written by a small program from the tool's published format, and say so
# below (logfmt from a Go service, a pino log, syslog lines, an nginx access log). mypy, ruff and
# tqdm come from PyPI and TypeScript from npm, pinned, into a throwaway directory; the rest
# (cargo, clippy, gcc, make, java, javac, node, npm, perl, jq, sqlite3, psql, bash, python3)
# are the machine's.
#
# Run it by hand; the outputs are committed, so the tests and the signal gate need none of it.
#
#   bash tests/corpus/generate-field.sh
set -euo pipefail
# shellcheck source=tests/corpus/lib.sh
source "$(dirname "$0")/lib.sh"

python3 -m venv "$work/venv"
"$work/venv/bin/pip" install --quiet mypy==1.13.0 ruff==0.8.4 tqdm==4.67.1

# mypy: 200 typed modules, one with two type errors.
mkdir -p "$work/mypy/pkg" && cd "$work/mypy"
touch pkg/__init__.py
for i in $(seq 1 200); do
    if [ "$i" = 117 ]; then
        printf 'def total(prices: list[int]) -> int:\n    return sum(prices)\n\ncount: int = total(["1", "2"])\nname: str = count\n' > "pkg/m$i.py"
    else
        printf 'def f%d(x: int) -> int:\n    return x + %d\n' "$i" "$i" > "pkg/m$i.py"
    fi
done
"$work/venv/bin/mypy" --strict --no-incremental -v pkg 2>&1 | grep -v -e '^LOG:  Metadata' | out mypy || true
must_grep mypy 'pkg/m117.py:4: error:' 'pkg/m117.py:5: error:' 'Found 3 errors in 1 file'

# ruff: a project with many findings, one a syntax error.
mkdir -p "$work/ruff" && cd "$work/ruff"
for i in $(seq 1 120); do printf 'import os\nimport sys\n\ndef f%d(x):\n    return x == None\n' "$i" > "m$i.py"; done
printf 'def broken(:\n    pass\n' > m60_syntax.py
"$work/venv/bin/ruff" check --no-cache --select E,F --output-format concise . 2>&1 | out ruff || true
must_grep ruff 'm60_syntax.py:1:12: SyntaxError' 'Found '

# pip: a resolver conflict, from PyPI's real metadata.
"$work/venv/bin/pip" install --dry-run --no-cache-dir 'requests==2.32.3' 'urllib3==1.20' 2>&1 | out pip-resolver || true
must_grep pip-resolver 'ERROR: Cannot install' 'ResolutionImpossible'

# tqdm: a download-like loop drawn with carriage returns, then a failure.
cat > "$work/bars.py" <<'PY'
import sys, time
from tqdm import tqdm
for name in ["numpy", "scipy", "pandas", "torch"]:
    for _ in tqdm(range(400), desc=f"Downloading {name}", file=sys.stdout, mininterval=0, ascii=True, ncols=80):
        pass
print("Installing collected packages: numpy, scipy, pandas, torch")
print("ERROR: Could not install packages due to an OSError: [Errno 28] No space left on device", file=sys.stdout)
PY
"$work/venv/bin/python" "$work/bars.py" 2>&1 | out install-progress || true
must_grep install-progress 'ERROR: Could not install packages due to an OSError'

# tsc: a TypeScript project with one error among many files.
mkdir -p "$work/ts/src" && cd "$work/ts"
npm init -y >/dev/null && npm install --silent --no-audit --no-fund typescript@5.7.2 >/dev/null
for i in $(seq 1 150); do
    if [ "$i" = 77 ]; then
        printf 'export function total%d(xs: number[]): number {\n  const n: number = "many";\n  return xs.length + n;\n}\n' "$i" > "src/m$i.ts"
    else
        printf 'export function total%d(xs: number[]): number {\n  return xs.length + %d;\n}\n' "$i" "$i" > "src/m$i.ts"
    fi
done
npx tsc --strict --noEmit --listFiles --pretty false src/*.ts 2>&1 | out tsc || true
must_grep tsc "src/m77.ts(2,9): error TS2322"

# npm: a build script that fails.
mkdir -p "$work/npmfail" && cd "$work/npmfail"
cat > package.json <<'JSON'
{ "name": "shop", "version": "1.0.0", "scripts": { "build": "node build.js" } }
JSON
cat > build.js <<'JS'
for (let i = 1; i <= 300; i++) console.log(`bundled chunk ${i} (${(i * 37) % 900 + 100} kB)`);
console.error("Error: Cannot find module './checkout/payment'");
process.exit(1);
JS
npm run build 2>&1 | out npm-run || true
must_grep npm-run "Error: Cannot find module './checkout/payment'"

# node: an uncaught TypeError after a service's log lines.
cat > "$work/server.js" <<'JS'
for (let i = 1; i <= 500; i++) console.log(`GET /api/items/${i} 200 ${(i * 13) % 40 + 2}ms`);
function render(order) { return order.customer.name.toUpperCase(); }
render({ id: 7 });
JS
node "$work/server.js" 2>&1 | out node-uncaught || true
must_grep node-uncaught "TypeError: Cannot read properties of undefined (reading 'name')"

# cargo clippy: warnings across a crate, and a deny-by-default lint as an error.
mkdir -p "$work/clip/src" && cd "$work/clip"
printf '[package]\nname = "clip"\nversion = "0.1.0"\nedition = "2021"\n' > Cargo.toml
{
    for i in $(seq 1 60); do echo "pub fn len_$i(v: &Vec<u8>) -> usize { if v.len() == 0 { 0 } else { v.len() } }"; done
    echo 'pub fn compare(x: f64) -> bool { x == f64::NAN }'
    echo 'pub fn never(x: u32) -> bool { x < u32::MIN }'
} > src/lib.rs
cargo clippy --color never 2>&1 | out cargo-clippy || true
must_grep cargo-clippy "error: this comparison involving the minimum or maximum element for this type contains a case that is always true or always false" "error: could not compile \`clip\`"

# A Rust panic with its backtrace.
mkdir -p "$work/panic/src" && cd "$work/panic"
printf '[package]\nname = "panicky"\nversion = "0.1.0"\nedition = "2021"\n' > Cargo.toml
cat > src/main.rs <<'RS'
fn parse(line: &str) -> u32 { line.trim().parse().expect("a quantity") }
fn main() {
    for i in 0..300 { println!("processed record {i}: {} items", i * 7 % 13); }
    let total: u32 = ["4", "x"].iter().map(|l| parse(l)).sum();
    println!("{total}");
}
RS
cargo build -q 2>/dev/null
RUST_BACKTRACE=1 "$CARGO_TARGET_DIR/debug/panicky" 2>&1 | out rust-panic-backtrace || true
must_grep rust-panic-backtrace "panicked at src/main.rs:1:51:" "a quantity: ParseIntError"

# Java: an exception wrapped twice, with `Caused by`.
mkdir -p "$work/jcause" && cd "$work/jcause"
cat > App.java <<'JAVA'
public class App {
    static void connect() { throw new IllegalStateException("connection refused: db.internal:5432"); }
    static void load() { try { connect(); } catch (IllegalStateException e) { throw new RuntimeException("could not load orders", e); } }
    public static void main(String[] args) {
        for (int i = 0; i < 300; i++) System.out.println("INFO  [main] warmed cache shard " + i);
        load();
    }
}
JAVA
javac App.java && java App 2>&1 | out java-caused-by || true
must_grep java-caused-by 'Exception in thread "main" java.lang.RuntimeException: could not load orders' 'Caused by: java.lang.IllegalStateException: connection refused: db.internal:5432'

# gcc: a link that fails on an undefined reference.
mkdir -p "$work/link" && cd "$work/link"
for i in $(seq 1 40); do printf 'int part%d(void) { return %d; }\n' "$i" "$i" > "p$i.c"; done
printf 'int checksum(int);\nint main(void) { return checksum(3); }\n' > main.c
gcc -v -o app main.c p*.c 2>&1 | out gcc-link || true
must_grep gcc-link "undefined reference to \`checksum'" "collect2: error: ld returned 1 exit status"

# make: a recipe that fails after many that succeed.
mkdir -p "$work/mk" && cd "$work/mk"
{
    printf 'all:'; for i in $(seq 1 80); do printf ' step%d' "$i"; done; printf '\n'
    for i in $(seq 1 80); do
        if [ "$i" = 55 ]; then printf 'step%d:\n\t@echo "migrating table %d"\n\t@sh -c "echo migration 55 failed: relation orders_v2 already exists >&2; exit 3"\n' "$i" "$i"
        else printf 'step%d:\n\t@echo "migrating table %d"\n' "$i" "$i"; fi
    done
} > Makefile
make 2>&1 | out make-recipe || true
must_grep make-recipe "migration 55 failed: relation orders_v2 already exists" "make: *** [Makefile:"

# sqlite3: a script with a constraint violation in the middle.
{
    echo "CREATE TABLE users(id INTEGER PRIMARY KEY, email TEXT UNIQUE);"
    for i in $(seq 1 400); do echo "INSERT INTO users(email) VALUES('user$i@example.com'); SELECT 'inserted $i';"; done
    echo "INSERT INTO users(email) VALUES('user7@example.com');"
    for i in $(seq 401 600); do echo "SELECT 'checked $i';"; done
} > "$work/load.sql"
sqlite3 -bail "$work/db.sqlite" < "$work/load.sql" 2>&1 | out sqlite3 || true
must_grep sqlite3 "UNIQUE constraint failed: users.email"

# psql: a migration run whose server is down.
{ for i in $(seq 1 120); do echo "applying migration 2026_11_$i.sql ... skipped (already applied)"; done
  psql -h 127.0.0.1 -p 9 -U app -d shop -c 'select 1' 2>&1 || true; } | out psql-refused
must_grep psql-refused "psql: error: connection to server at \"127.0.0.1\", port 9 failed: Connection refused"

# bash -x: a deploy script traced, failing on a missing file.
cat > "$work/deploy.sh" <<'SH'
set -e
for i in $(seq 1 150); do
    target="web-$i"
    echo "synced $target"
done
cp /nonexistent/release.tar.gz /tmp/does-not-matter
SH
bash -x "$work/deploy.sh" 2>&1 | sed "s|$work|/work|g" | out bash-trace || true
must_grep bash-trace "cp: cannot stat '/nonexistent/release.tar.gz': No such file or directory"

# perl: confess with a stack, after a report.
cat > "$work/report.pl" <<'PL'
use strict; use warnings; use Carp;
for my $i (1..300) { print "row $i: ", $i * 3 % 17, "\n"; }
sub ratio { my ($a, $b) = @_; confess "cannot divide totals: divisor is zero" if $b == 0; $a / $b }
sub summary { ratio(10, 0) }
summary();
PL
perl "$work/report.pl" 2>&1 | sed "s|$work|/work|g" | out perl-confess || true
must_grep perl-confess "cannot divide totals: divisor is zero at /work/report.pl line 3."

# jq: a stream of records, one malformed (its error comes first: stderr is not buffered, stdout is).
{ for i in $(seq 1 500); do echo "{\"id\": $i, \"ok\": true}"; done; echo '{"id": 501, "ok": tru}'; } > "$work/records.jsonl"
jq -c '.id' "$work/records.jsonl" 2>&1 | out jq-parse || true
must_grep jq-parse "parse error: Invalid literal"

# JSON documents, as tools print them: cargo metadata (compact) and jq (pretty). Their test is
# that a cut is still JSON, not a line to see.
cd "$work/clip" && cargo metadata --format-version 1 --no-deps 2>/dev/null | sed "s|$work|/work|g" | out cargo-metadata-json
: > "$here/cargo-metadata-json.must"
jq -n '[range(0; 3000) | {id: ., sku: "SKU-\(. * 7919 % 100000)", price: (. * 37 % 1000), tags: ["a", "b"]}]' | out jq-pretty-json
: > "$here/jq-pretty-json.must"

# unittest: a failure among many passing tests.
mkdir -p "$work/ut" && cd "$work/ut"
{
    echo "import unittest"
    echo "class Shop(unittest.TestCase):"
    for i in $(seq 1 300); do
        if [ "$i" = 150 ]; then echo "    def test_refund_$i(self): self.assertEqual(round(19.99 * 3, 2), 59.96)"
        else echo "    def test_case_$i(self): self.assertEqual($i + 1, $((i + 1)))"; fi
    done
    echo "unittest.main(verbosity=2)"
} > test_shop.py
python3 test_shop.py 2>&1 | out python-unittest || true
must_grep python-unittest "FAIL: test_refund_150 (__main__.Shop.test_refund_150)" "AssertionError: 59.97 != 59.96" "FAILED (failures=1)"

# A Python service log whose warning says what happened before the error.
cat > "$work/upstream.py" <<'PY'
import logging, sys
logging.basicConfig(stream=sys.stdout, level=logging.INFO, format="2026-11-24 09:%(mm)s %(levelname)s %(name)s: %(message)s")
log = logging.getLogger("gateway")
for n in range(1, 9000):
    mm = f"{n // 600:02d}:{n % 60:02d}"
    if n == 4000:
        log.warning("retrying upstream after 503 from inventory (attempt 3 of 3)", extra={"mm": mm})
    elif n == 4001:
        log.error("upstream inventory unavailable, serving stale stock for 42 items", extra={"mm": mm})
    else:
        log.info("GET /stock/%d 200 in %dms", n, n % 50 + 3, extra={"mm": mm})
PY
python3 "$work/upstream.py" 2>&1 | out python-warning-log
must_grep python-warning-log "WARNING gateway: retrying upstream after 503" "ERROR gateway: upstream inventory unavailable"

# JSON-lines service log (Python's logging with a JSON formatter): an error and a fatal record
# in the middle of 8,000 info records.
cat > "$work/jsonlog.py" <<'PY'
import json, logging, sys
class Json(logging.Formatter):
    def format(self, record):
        return json.dumps({"ts": f"2026-11-24T10:{record.n // 600:02d}:{record.n % 60:02d}Z", "level": record.levelname.lower(), "logger": record.name, "msg": record.getMessage(), "request_id": f"r{record.n * 7919 % 100000:05d}"})
handler = logging.StreamHandler(sys.stdout); handler.setFormatter(Json())
log = logging.getLogger("billing"); log.addHandler(handler); log.setLevel(logging.INFO)
for n in range(1, 8003):
    if n == 4000: log.error("charge declined by processor: card_expired", extra={"n": n})
    elif n == 4001: log.critical("ledger write failed, shutting down", extra={"n": n})
    else: log.info("invoice %d rendered in %dms", n, n % 40 + 5, extra={"n": n})
PY
python3 "$work/jsonlog.py" | sed 's/"level": "critical"/"level": "fatal"/' | out jsonl-service-log
must_grep jsonl-service-log 'charge declined by processor' 'ledger write failed'

# logfmt, as a Go service with logrus or slog prints it (no Go toolchain here: written from
# logfmt's published format by a small program).
python3 - <<'PY' | out logfmt-service-log
for n in range(1, 6001):
    ts = f"2026-11-24T11:{n // 600:02d}:{n % 60:02d}Z"
    if n == 3100:
        print(f'time={ts} level=error msg="payment webhook rejected" status=401 provider=stripe')
    elif n == 3101:
        print(f'time={ts} level=warning msg="retry queue at 90% capacity" depth=9000')
    else:
        print(f'time={ts} level=info msg="request served" path=/orders/{n * 7919 % 100000} status=200 duration={n % 70 + 2}ms')
PY
must_grep logfmt-service-log 'msg="payment webhook rejected"' 'msg="retry queue at 90% capacity"'

# pino (Node's JSON logger, numeric levels: 30 info, 40 warn, 50 error, 60 fatal), written from
# its published format by node itself (pino is not a dependency worth installing for this).
node -e '
for (let n = 1; n <= 6000; n++) {
  const level = n === 2500 ? 50 : n === 2501 ? 60 : 30;
  const msg = n === 2500 ? "order sync failed: ETIMEDOUT 10.0.0.7:443" : n === 2501 ? "worker exiting after 3 crashes" : `synced order ${n * 7919 % 100000}`;
  console.log(JSON.stringify({ level, time: 1764000000000 + n * 37, pid: 4242, hostname: "api-1", msg }));
}' | out pino-log
must_grep pino-log 'order sync failed: ETIMEDOUT' 'worker exiting after 3 crashes'

# syslog lines (RFC 3164 as journald forwards them), written from the format.
python3 - <<'PY' | out syslog
for n in range(1, 5001):
    t = f"Nov 24 12:{n // 600:02d}:{n % 60:02d}"
    if n == 2600:
        print(f"{t} db-1 postgres[811]: FATAL:  could not write to file \"pg_wal/xlogtemp.811\": No space left on device")
    else:
        print(f"{t} db-1 cron[{700 + n % 50}]: (app) CMD (/usr/local/bin/rotate --shard {n * 7919 % 997})")
PY
must_grep syslog 'FATAL:  could not write to file'

# An HTTP access log in nginx's combined format with a few 5xx lines, written from the format.
python3 - <<'PY' | out nginx-access
for n in range(1, 8001):
    status = 502 if n in (3000, 3001, 5200) else 200
    path = f"/api/cart/{n * 7919 % 100000}"
    print(f'10.1.{n % 250}.{n * 7 % 250} - - [24/Nov/2026:13:{n // 600:02d}:{n % 60:02d} +0000] "GET {path} HTTP/1.1" {status} {n * 37 % 9000 + 120} "-" "shop-app/3.1"')
PY
grep -F '" 502 ' "$here/nginx-access.out" > "$here/nginx-access.must"

echo "corpus (field) written to $here"
