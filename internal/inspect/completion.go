package inspect

import (
	"context"
	"sort"
	"strings"

	"github.com/zklock/zklock/internal/recipe"
	"github.com/zklock/zklock/zkconn"
)

// PathsUnder returns the paths of the children of parent whose names begin
// with prefix, sorted: what a shell completes a lock path from. ZooKeeper's
// own /zookeeper is left out, as no lock lives there.
func PathsUnder(ctx context.Context, conn zkconn.Options, parent, prefix string) ([]string, error) {
	client, err := zkconn.Dial(ctx, conn)
	if err != nil {
		return nil, err
	}
	defer client.Close()
	names, err := client.Children(ctx, parent)
	if err != nil {
		return nil, err
	}
	var paths []string
	for _, n := range names {
		p := zkconn.Join(parent, n)
		if strings.HasPrefix(n, prefix) && p != "/zookeeper" {
			paths = append(paths, p)
		}
	}
	sort.Strings(paths)
	return paths, nil
}

// ContendersAt names the contenders of the lock at path, in queue order, as
// list shows them and revoke --node takes them: what a shell completes a
// contender from.
func ContendersAt(ctx context.Context, conn zkconn.Options, path string) ([]string, error) {
	client, err := zkconn.Dial(ctx, conn)
	if err != nil {
		return nil, err
	}
	defer client.Close()
	return recipe.ContenderNames(ctx, client, path)
}
