# Sourced by scripts: installs, idempotently, what builds and tests need on a
# fresh Debian machine. Each step is skipped when already satisfied.

apt_updated=""
apt_install() {
	local missing=()
	for p in "$@"; do
		dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	if [ "$(id -u)" != 0 ]; then
		echo "deps: need root to install: ${missing[*]}" >&2
		return 1
	fi
	if [ -z "$apt_updated" ]; then
		DEBIAN_FRONTEND=noninteractive apt-get update -qq
		apt_updated=1
	fi
	echo "deps: apt-get install ${missing[*]}"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# versitygw is the S3-compatible server the object-store tests start.
install_versitygw() {
	local bin
	bin="$(go env GOPATH)/bin/versitygw"
	if [ ! -x "$bin" ]; then
		echo "deps: go install versitygw@v1.8.0 (about 3 minutes on 2 cores)"
		GOFLAGS= go install github.com/versity/versitygw/cmd/versitygw@v1.8.0
	fi
	export SEMFS_TEST_VERSITYGW="$bin"
}

install_test_deps() {
	# fuse3: fusermount3 and /dev/fuse handling for the FUSE mount tests.
	# postgresql: the server the PostgreSQL index tests start (initdb as postgres).
	# grep/findutils/coreutils/bash: the GNU tools the shell's differential tests compare with.
	# python3: a socket client run as another uid (daemon TestSnapshotNeedsAdmin).
	apt_install fuse3 postgresql grep findutils coreutils bash tree ripgrep git ca-certificates python3
	if [ -e /dev/fuse ]; then :; else
		echo "deps: /dev/fuse is missing on this machine; FUSE tests will skip and say so" >&2
	fi
	install_versitygw
	install_node_clients
}

# The official MCP clients (TypeScript SDK, inspector) that the mcpserver and
# httpapi tests drive against the semfs binary; pinned by package-lock.json.
install_node_clients() {
	if ! command -v npm >/dev/null; then
		echo "deps: npm is missing; the MCP client tests will skip and say so" >&2
		return 0
	fi
	if [ ! -d testdata/node/node_modules ] || [ testdata/node/package-lock.json -nt testdata/node/node_modules ]; then
		echo "deps: npm ci --prefix testdata/node"
		npm ci --prefix testdata/node --no-audit --no-fund --loglevel=error
	fi
}
