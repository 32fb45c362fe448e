package zkconn

import "context"

// Set writes a node's data at any version.
func (c *Client) Set(ctx context.Context, p string, data []byte) error {
	_, err := call(ctx, func() (struct{}, error) {
		_, err := c.conn.Set(c.abs(p), data, -1)
		return struct{}{}, err
	})
	return c.wrap(err)
}
