#!/usr/bin/env bash
# The package as a user installs it (issue 19 item 7): `npm pack` (prepack builds the server and the
# dashboard), the tarball installed with --omit=dev into an empty folder, from npm's cache only (no
# network: `npm ci` filled the cache); then the installed `assent` creates an organization and serves
# a fresh data directory, which must answer GET /health/ready with 200 and serve the dashboard at the
# organization's host, and stop cleanly on SIGTERM. CI runs it after `npm ci` (.ci/run).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/assent-pack-XXXXXX")
server=""
cleanup() {
  if [ -n "$server" ] && kill -0 "$server" 2>/dev/null; then kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
started=$(date +%s)

tarball=$(npm pack --silent --pack-destination "$work" | tail -n 1)
echo "pack-check: packed $tarball ($(du -h "$work/$tarball" | cut -f1))"
# What must be in it, and what must not.
listing=$(tar -tzf "$work/$tarball")
for f in package/bin/assent.mjs package/dist/cli/main.js package/dist/main.js package/dist/db/migrations/0001_foundation.sql package/web/dist/index.html package/LICENSE; do
  grep -qx "$f" <<<"$listing" || { echo "pack-check: $f is not in the package" >&2; exit 1; }
done
if grep -qE '^package/(src|test|web/src|bench)/' <<<"$listing"; then echo "pack-check: sources or tests are in the package" >&2; exit 1; fi

# An empty folder, the tarball its only dependency, production dependencies only, from npm's cache.
# `npm ci` fills the cache with the tarballs of the lock's versions but not with the registry's version
# lists, so an offline install must be told the versions: the folder gets a lock made from the
# checkout's (its entries that are not dev-only, hoisted as they are there) and the same overrides.
# With a network, `npm install --omit=dev assent-<version>.tgz` resolves the same ranges itself.
mkdir "$work/app"
cd "$work/app"
node - "$root" "$tarball" <<'JS'
const fs = require('fs');
const [root, tarball] = process.argv.slice(2);
const lock = JSON.parse(fs.readFileSync(`${root}/package-lock.json`, 'utf8'));
const pkg = JSON.parse(fs.readFileSync(`${root}/package.json`, 'utf8'));
const self = lock.packages[''];
const spec = `file:../${tarball}`;
const packages = {
  '': { name: 'assent-install-check', dependencies: { assent: spec } },
  'node_modules/assent': { version: self.version, resolved: spec, license: self.license, dependencies: self.dependencies, bin: self.bin, engines: self.engines },
};
for (const [path, entry] of Object.entries(lock.packages)) {
  if (path.startsWith('node_modules/') && !entry.dev) packages[path] = entry;
}
fs.writeFileSync('package.json', JSON.stringify({ name: 'assent-install-check', private: true, dependencies: { assent: spec }, overrides: pkg.overrides }, null, 2));
fs.writeFileSync('package-lock.json', JSON.stringify({ name: 'assent-install-check', lockfileVersion: 3, requires: true, packages }, null, 2));
JS
npm ci --omit=dev --offline --no-audit --no-fund --loglevel=error > "$work/install.log" 2>&1 || {
  cat "$work/install.log" >&2
  echo "pack-check: npm ci --omit=dev --offline of the tarball failed (above)" >&2
  exit 1
}
[ ! -e node_modules/vite ] && [ ! -e node_modules/typescript ] || { echo "pack-check: a dev dependency was installed" >&2; exit 1; }
echo "pack-check: installed with --omit=dev ($(ls node_modules | wc -l) packages)"

# The installed command: an organization with the CLI, then the server.
export DATA_DIR="$work/data" HOST=127.0.0.1 LOG_LEVEL=warn
npx --no-install assent org create packcheck > /dev/null
port=$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
PORT="$port" node node_modules/.bin/assent serve > "$work/serve.log" 2>&1 &
server=$!
status=""
for _ in $(seq 1 300); do
  status=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/health/ready" || true)
  [ "$status" = "200" ] && break
  kill -0 "$server" 2>/dev/null || break
  sleep 0.3
done
if [ "$status" != "200" ]; then
  cat "$work/serve.log" >&2
  echo "pack-check: the installed package did not answer /health/ready with 200 (last: ${status:-no answer})" >&2
  exit 1
fi
# The dashboard, built into the package, at the organization's host.
page=$(curl -s -H "Host: packcheck.localhost:$port" "http://127.0.0.1:$port/")
grep -q '<div id="root">' <<<"$page" || { echo "pack-check: the dashboard's page is not served: ${page:0:300}" >&2; exit 1; }
kill -TERM "$server"
wait "$server" || { cat "$work/serve.log" >&2; echo "pack-check: the server did not stop cleanly on SIGTERM" >&2; exit 1; }
server=""
echo "pack-check: the installed package served /health/ready and the dashboard; $(( $(date +%s) - started )) s in all"
