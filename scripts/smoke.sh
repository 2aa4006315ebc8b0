#!/usr/bin/env bash
# A short smoke of a built checkout on whatever `node` is first on PATH (used to check each
# supported Node line): start the server on an empty data folder, /health, create one post,
# upload one Word file and wait for it to be indexed, stop with SIGTERM and expect exit 0.
#   npm ci && npm run build && bash scripts/smoke.sh
set -euo pipefail
cd "$(dirname "$0")/.."
data=$(mktemp -d)
port=${SMOKE_PORT:-3917}
key=blog_smoke_$(node -p 'require("crypto").randomBytes(16).toString("hex")')
DATA_DIR=$data PORT=$port BOOTSTRAP_API_KEY=$key GENERATOR=builtin LOG_LEVEL=warn node dist/src/server.js >"$data/server.log" 2>&1 &
server=$!
trap 'kill -9 $server 2>/dev/null || true; rm -rf "$data"' EXIT
json() { node -e 'let s="";process.stdin.on("data",c=>s+=c).on("end",()=>{const v=new Function("j","return "+process.argv[1])(JSON.parse(s));console.log(v)})' "$1"; }
for _ in $(seq 60); do curl -sf "localhost:$port/health" >/dev/null && break; sleep 1; done
auth="Authorization: Bearer $key"
echo "node $(node --version): /health $(curl -sf "localhost:$port/health")"
slug=$(curl -sf "localhost:$port/api/v1/posts" -H "$auth" -H 'content-type: application/json' -d '{"title":"Hello world","content":"# Hi"}' | json j.data.post.slug)
echo "post created: $slug"
id=$(curl -sf "localhost:$port/api/v1/knowledge" -H "$auth" -F "file=@test/fixtures/word/test01.docx" | json j.data.knowledge.id)
status=uploaded
for _ in $(seq 60); do
  status=$(curl -sf "localhost:$port/api/v1/knowledge/$id" -H "$auth" | json 'j.data.knowledge.status')
  [ "$status" != uploaded ] && break
  sleep 1
done
echo "upload $id: $status"
[ "$status" = indexed ] || { cat "$data/server.log"; exit 1; }
kill -TERM $server
code=0; wait $server || code=$?
echo "server stopped: exit $code"
[ "$code" = 0 ]
