package cmd

import (
	"errors"
	"fmt"
	"strconv"
)

// orderKeyValue is --order-key: an integer a pipeline already has (its
// run number, a commit's timestamp). nil means the flag was not given,
// so 0 and negative keys stay keys.
type orderKeyValue struct{ key *int64 }

func (k *orderKeyValue) String() string {
	if k.key == nil {
		return ""
	}
	return strconv.FormatInt(*k.key, 10)
}

func (k *orderKeyValue) Type() string { return "K" }

func (k *orderKeyValue) Set(s string) error {
	n, err := strconv.ParseInt(s, 10, 64)
	switch {
	case errors.Is(err, strconv.ErrRange):
		return fmt.Errorf("%s is out of range (a 64-bit integer)", s)
	case err != nil:
		return fmt.Errorf("%q is not an integer", s)
	}
	k.key = &n
	return nil
}
