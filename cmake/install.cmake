# `cmake --install` and CPack: the binary in bin/, the suites in share/attnbench/configs (where an installed
# binary looks for them first: core/grid.cpp, suite_search_dirs), the scripts, the JSON Schemas and the Python
# package sources in share/attnbench/, the README and docs/*.md in share/doc/attnbench. `cpack -G DEB` makes a
# Debian package of the same tree.
include(GNUInstallDirs)
set(ATTNBENCH_DATA_DIR ${CMAKE_INSTALL_DATADIR}/attnbench)

install(TARGETS attnbench RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY configs/ DESTINATION ${ATTNBENCH_DATA_DIR}/configs FILES_MATCHING PATTERN "*.json")
# The user-facing scripts (thin wrappers over the Python package, and the shell drivers around the binary).
install(PROGRAMS scripts/peer_torch.py scripts/plot_report.py scripts/tune_repro.py scripts/gate_study.py
                 scripts/check-schemas.py scripts/ci-perf.sh scripts/baseline-compare.sh scripts/gate-settings.sh
        DESTINATION ${ATTNBENCH_DATA_DIR}/scripts)
# The JSON Schemas of reports and caches (docs/report-format.md; scripts/check-schemas.py reads them).
install(DIRECTORY schemas/ DESTINATION ${ATTNBENCH_DATA_DIR}/schemas FILES_MATCHING PATTERN "*.schema.json")
install(FILES scripts/attnbench_rows.py scripts/atomic_file.py DESTINATION ${ATTNBENCH_DATA_DIR}/scripts)
install(DIRECTORY python/attnbench DESTINATION ${ATTNBENCH_DATA_DIR}/python
        FILES_MATCHING PATTERN "*.py" PATTERN "__pycache__" EXCLUDE)
# The plugin ABI header (include/attnbench/plugin.h) and the example plugins' sources, to build a plugin
# against an installed attnbench (docs/plugins.md).
install(FILES include/attnbench/plugin.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/attnbench)
install(DIRECTORY examples/plugins/ DESTINATION ${ATTNBENCH_DATA_DIR}/examples/plugins)
install(FILES README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR} FILES_MATCHING PATTERN "*.md")

# ---- CPack: a Debian package (cpack -G DEB --config BUILD/CPackConfig.cmake) ---------------------------
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME attnbench)
set(CPACK_PACKAGE_VENDOR attnbench)
set(CPACK_PACKAGE_CONTACT "attnbench maintainers <attnbench@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Benchmarks and autotunes multi-head attention GEMMs on NVIDIA GPUs")
set(CPACK_PACKAGE_INSTALL_DIRECTORY attnbench)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "python3-pandas, python3-matplotlib")
if(ATTNBENCH_CUDA)
  # cuBLASLt, CUPTI and the CUDA runtime come from NVIDIA's toolkit, which dpkg-shlibdeps may not know.
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS OFF)
  set(CPACK_DEBIAN_PACKAGE_DEPENDS "libfmt9 | libfmt-dev")
else()
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
endif()
include(CPack)
