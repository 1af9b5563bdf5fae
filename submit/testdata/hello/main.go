// Command hello is a program that uses the C library when cgo is on (os/user's lookup), for
// TestDynamicInterpreter.
package main

import (
	"fmt"
	"os/user"
)

func main() {
	u, err := user.Current()
	fmt.Println(u, err)
}
