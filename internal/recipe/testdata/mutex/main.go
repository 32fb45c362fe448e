// Command mutex takes a lock with package lock, runs nothing, and lets it
// go: the smallest program a Go service would write with this library.
// TestMutexProgramDependencies checks what it links: no Kerberos, no
// command-line or configuration libraries.
//
//	go run ./internal/recipe/testdata/mutex -servers zk1:2181,zk2:2181 -path /locks/x
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"time"

	"github.com/zklock/zklock/internal/recipe"
	"github.com/zklock/zklock/zkconn"
)

func main() {
	servers := flag.String("servers", "127.0.0.1:2181", "the ensemble's connect string")
	path := flag.String("path", "/locks/example", "the lock path")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cs, err := zkconn.ParseConnString(*servers)
	if err != nil {
		log.Fatal(err)
	}
	c, err := zkconn.Dial(ctx, zkconn.Options{ConnString: cs, SessionTimeout: 10 * time.Second})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	l, err := recipe.Acquire(ctx, c, *path, recipe.Request{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("holding", l.Path)
	if err := l.Release(ctx); err != nil {
		log.Fatal(err)
	}
}
