// Package deploy holds brk's deployment manifests (kubernetes/) and the
// test that validates them. It is a module of its own so that the
// Kubernetes API types stay out of brk's module; .ci/run runs its test.
package deploy
