// Package shared holds what several command packages of the CLI use: the submit client and
// progress writer of submit and app, and the one application query of app list and cluster
// apps. Command packages import it and cmdutil, never each other.
package shared
