package main

import (
	"fmt"
	"os"
	"os/exec"
)

// goBuild builds this package's yarn-er binary into bin, with env added to the environment.
func goBuild(bin string, env ...string) error {
	cmd := exec.Command("go", "build", "-mod=mod", "-o", bin, ".")
	cmd.Env = append(os.Environ(), env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build: %w: %s", err, out)
	}
	return nil
}
