# The built package's Python files (FROM) into the toy module's package (TO), its own _lcrwmd
# kept: the same package with one method more.
file(GLOB sources ${FROM}/*.py ${FROM}/*.pyi ${FROM}/py.typed)
file(COPY ${sources} DESTINATION ${TO})
