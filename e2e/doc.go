// Package e2e holds zklock's end-to-end tests: the test binary doubles as
// the zklock command (see TestMain), and the tests run it against real
// ZooKeeper servers, through testscript scripts (../testdata/script) and from
// Go where a property needs more than a script can say: overlap detectors,
// killed and frozen processes, partitions and ensembles.
package e2e
