//go:build !unix

package discovery

import (
	"context"
	"errors"
	"os"
)

var errNoCoordination = errors.New("device coordination needs flock(2): it is only available on Unix systems")

// Coordinator is unavailable off Unix; every method fails.
type Coordinator struct{}

// NewCoordinator fails off Unix.
func NewCoordinator(CoordinatorOptions) (*Coordinator, error) { return nil, errNoCoordination }

// LockPath is empty off Unix.
func (c *Coordinator) LockPath() string { return "" }

// Acquire fails off Unix.
func (c *Coordinator) Acquire(context.Context, Owner, []Device, int) ([]Device, error) {
	return nil, errNoCoordination
}

// Release fails off Unix.
func (c *Coordinator) Release(context.Context, Owner) ([]string, error) {
	return nil, errNoCoordination
}

// WriteFileAtomic writes data to a new file next to path and renames it over path.
func WriteFileAtomic(path string, data []byte, perm os.FileMode) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, perm); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// Inherit fails off Unix.
func (h *Holding) Inherit() error { return errNoCoordination }

// Hold fails off Unix.
func (c *Coordinator) Hold(context.Context, []Device, int) (*Holding, error) {
	return nil, errNoCoordination
}
