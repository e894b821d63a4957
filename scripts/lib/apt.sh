# Sourced by the scripts that install what they need from Debian; the caller
# defines fail (print and exit).

# apt_install PKG...: installs PKG with apt-get, as root or through sudo -n
# (never prompting: CI has no one to type a password).
apt_install() {
  local sudo=()
  command -v apt-get >/dev/null 2>&1 || fail "$* is not installed and there is no apt-get"
  if [ "$(id -u)" != 0 ]; then
    command -v sudo >/dev/null 2>&1 || fail "not root and no sudo: cannot install $*"
    sudo=(sudo -n)
  fi
  echo "${0##*/}: installing $* with apt-get" >&2
  "${sudo[@]}" apt-get update -qq >&2 || fail "apt-get update failed"
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >&2 \
    || fail "apt-get install $* failed"
}
