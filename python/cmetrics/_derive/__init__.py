"""Derivations on what the kernels counted: the metrics of a counted table, of the probability
pass, of a ranking walk, of one-vs-rest and one-vs-one walks and of indicator matrices. Nothing
here imports a public module: the public functions are built on these."""
