// Package cowmap provides a read-mostly map whose reads take no lock and
// allocate nothing: the map is immutable and replaced whole (copy on write)
// when a key is added. It suits small key sets that are filled once and read
// on every request, such as metric label sets and per-host retry budgets.
package cowmap
