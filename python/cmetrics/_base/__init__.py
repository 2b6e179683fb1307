"""The floor of the package: the type aliases, the value checks the numpy backend shares, the
process settings (threads, class limit) and the validation of every argument. It imports
nothing of cmetrics but :mod:`cmetrics.exceptions`."""
