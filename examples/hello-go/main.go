// A small program to run through heal: it reports what it can see of the machine.
package main

import (
	"fmt"
	"net"
	"os"
	"strings"
)

func main() {
	host, _ := os.Hostname()
	fmt.Printf("hello from %q: pid %d, uid %d\n", host, os.Getpid(), os.Getuid())

	_, err := os.ReadDir("/home")
	fmt.Printf("can list /home: %v\n", err == nil)

	keys := 0
	for _, kv := range os.Environ() {
		if strings.Contains(strings.ToUpper(kv), "KEY") || strings.Contains(strings.ToUpper(kv), "TOKEN") {
			keys++
		}
	}
	fmt.Printf("API keys or tokens in the environment: %d\n", keys)

	_, err = net.Dial("tcp", "1.1.1.1:443")
	fmt.Printf("network reachable: %v\n", err == nil)

	err = os.WriteFile("/etc/heal-was-here", []byte("x"), 0o644)
	fmt.Printf("can write /etc: %v\n", err == nil)
}
