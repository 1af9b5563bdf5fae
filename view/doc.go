// Package view holds the public shapes that yarn-er prints with -o json and -o yaml: plain structs
// with json tags, free of behaviour, so that the CLI and a future HTTP API return the same documents.
//
// The JSON shapes are public contracts (README.md and docs/ describe them): change them only
// additively. The preflight report is preflight.Report, which is its own view.
package view
