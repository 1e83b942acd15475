#!/usr/bin/env bash
# The test command behind `npm test` (run through bootstrap.sh): static checks first, quietly,
# then every package's tests with their reports.
set -euo pipefail
turbo run lint check-types --output-logs=errors-only
turbo run test --output-logs=new-only
