# Installs sharelane: `make install` (PREFIX=/usr/local, CONFIGURATION=release), `make uninstall`.
# Scripts/install.sh does the work and says what each variable means.
PREFIX ?= /usr/local
CONFIGURATION ?= release
DESTDIR ?=
export PREFIX CONFIGURATION DESTDIR

.PHONY: install uninstall

install:
	Scripts/install.sh install

uninstall:
	Scripts/install.sh uninstall
