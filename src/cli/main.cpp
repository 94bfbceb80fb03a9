// attnbench entry point (placeholder while the CLI is written).
#include <cstdio>
int main() { std::puts("attnbench " ATTNBENCH_VERSION); return 0; }
