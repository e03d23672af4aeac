package cli

import (
	"context"
	"errors"
	"path/filepath"
	"time"

	"github.com/semfs/semfs/client"
	"github.com/semfs/semfs/daemon"
)

// defaultSocket is the control socket the daemon commands talk to:
// SEMFS_SOCKET, else the daemon's default.
func defaultSocket() string {
	return envOr("SEMFS_SOCKET", daemon.DefaultConfig().Socket)
}

// runningDaemon returns a client of the daemon at sock if one answers.
func runningDaemon(ctx context.Context, sock string) (*client.Client, bool) {
	c := client.New(sock)
	c.DialTimeout = time.Second
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if _, err := c.Health(ctx); err != nil {
		c.Close()
		return nil, false
	}
	return c, true
}

// registerToken registers this process with the token the environment
// gives (SEMFS_TOKEN_FILE, else SEMFS_TOKEN; see client.EnvToken), so that
// its socket requests run as that token's principal rather than as its uid
// with no groups. Without a token it does nothing.
func registerToken(ctx context.Context, c *client.Client) error {
	tok, err := client.EnvToken()
	if err != nil || tok == "" {
		return err
	}
	return c.Register(ctx, "", client.WithToken(tok))
}

// unavailable marks daemon transport failures for the exit code.
func unavailable(err error) error {
	if errors.Is(err, client.ErrUnavailable) {
		return UnavailableError{err}
	}
	return err
}

func absPath(p string) string {
	if abs, err := filepath.Abs(p); err == nil {
		return abs
	}
	return p
}
