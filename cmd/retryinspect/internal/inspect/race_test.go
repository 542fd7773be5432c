//go:build race

package inspect

// raceEnabled scales large test inputs down under the race detector,
// which makes analysis about ten times slower.
const raceEnabled = true
