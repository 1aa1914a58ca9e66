import fc from 'fast-check'

// Under mutation testing only whether a property fails matters, not its smallest counterexample:
// shrinking a failure would cost a mutant many times the test's own run.
fc.configureGlobal({endOnFailure: true})
