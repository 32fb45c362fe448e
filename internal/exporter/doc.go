// Package exporter serves the lock tree below a path to Prometheus, for
// zklock exporter: how many hold and wait at each lock path, how long the
// oldest has held and waited, who holds it, and the exporter's own health.
//
// It follows the tree with internal/follow, the watches of list --watch:
// a child watch per listed node and none per contender, so a scrape costs
// the servers nothing and the view is as fresh as the last change. It only
// reads: it never creates a node, never holds a lock. While no session is
// established it keeps serving the last tree it read, with
// zklock_exporter_up at 0, so that an alert sees the exporter blind rather
// than the locks gone.
//
// What other clients wrote (hosts, commands, Curator's and Kazoo's node
// data) becomes label values: they are cut to a bounded length and escaped
// losslessly (see label.go), and the number of lock paths exported is
// capped (Options.MaxPaths), so that a wide or hostile tree cannot flood
// Prometheus with series.
package exporter
