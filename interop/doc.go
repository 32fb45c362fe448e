// Package interop holds tests only: zklock contending with unmodified
// Apache Curator 5 and Kazoo clients (see internal/testkit/peers) for the same lock
// paths on a real ZooKeeper, with an overlap detector in every critical
// section.
//
// Run them with `go test ./interop`. They need the Debian packages that
// scripts/install-deps.sh installs, and fail, never skip, without them.
package interop
