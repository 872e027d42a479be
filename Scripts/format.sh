#!/usr/bin/env bash
# Formats the Swift sources in place with the toolchain's swift-format and the checked-in .swift-format.
set -euo pipefail
cd "$(dirname "$0")/.."
swift format --in-place --recursive --configuration .swift-format Package.swift Sources Tests Examples
