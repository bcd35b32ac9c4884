#!/usr/bin/env bash
# Installs Meetecho's simple-whip-server, the WHIP endpoint test/e2e/whip-real.test.ts runs in front
# of Janus, into $SIMPLE_WHIP_SERVER_DIR (default /opt/simple-whip-server); does nothing when it is
# there. Debian's package cannot be installed beside this machine's Node (it depends on Debian's
# nodejs), but its files are plain JavaScript: they are fetched with apt-get download and unpacked,
# and the npm packages the package would take from Debian come from the npm registry, pinned.
set -euo pipefail

dir="${SIMPLE_WHIP_SERVER_DIR:-/opt/simple-whip-server}"
if [ -e "$dir/src/server.js" ] && [ -e "$dir/node_modules/express/package.json" ]; then exit 0; fi

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
chmod 755 "$tmp" # apt-get download writes as the _apt user where it can
echo "install-simple-whip-server: fetching Debian's simple-whip-server into $dir"
# the package lists may not be there yet on a fresh machine
(cd "$tmp" && { apt-get download -qq simple-whip-server 2>/dev/null || { apt-get update -qq && apt-get download -qq simple-whip-server; }; })
deb="$(ls "$tmp"/simple-whip-server_*.deb)"
dpkg -x "$deb" "$tmp/root"

# Built beside the target and moved in place last, so an interrupted run leaves nothing half done.
rm -rf "$dir.partial"
mkdir -p "$dir.partial/src"
share="$tmp/root/usr/share/simple-whip-server"
# src/config.js is a link to /etc in the package: each run writes its own beside a copy of src/
cp "$share/src/server.js" "$share/src/whip-janus.js" "$dir.partial/src/"
cp -r "$share/web" "$dir.partial/web"
cp "$tmp/root/usr/share/doc/simple-whip-server/copyright" "$dir.partial/copyright"
dpkg-deb -f "$deb" Version >"$dir.partial/VERSION"
# What server.js and whip-janus.js require (the package's Depends on node-*), at the versions of
# their Debian major lines. --ignore-scripts: websocket's native helpers load their prebuilt binaries.
npm install --no-save --no-audit --no-fund --ignore-scripts --loglevel=error --prefix "$dir.partial" \
  express@4.22.3 body-parser@1.20.9 cors@2.8.6 async@3.2.6 colors@1.4.0 debug@4.4.3 websocket@1.0.35
rm -rf "$dir"
mv "$dir.partial" "$dir"
echo "install-simple-whip-server: simple-whip-server $(cat "$dir/VERSION") in $dir"
