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
		echo "need root to install: ${missing[*]}" >&2
		return 1
	fi
	if [ -z "$apt_updated" ]; then
		DEBIAN_FRONTEND=noninteractive apt-get update -qq
		apt_updated=1
	fi
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
}

install_test_deps() {
	apt_install fuse3 git ca-certificates
}
