// `attnbench list`.
#pragma once

namespace ab {
int list_command();
}
