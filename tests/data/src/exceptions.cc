// C++ with exceptions: landing pads, cleanups, a throw through several frames.
#include <stdexcept>
#include <string>
#include <vector>

namespace ns {
struct Guard { std::string name; ~Guard() { name.clear(); } };
[[gnu::noinline]] int thrower(int n) {
    Guard g{"thrower"};
    if (n > 2) throw std::runtime_error("too big: " + std::to_string(n));
    return n * 2;
}
[[gnu::noinline]] int middle(std::vector<int> &v) {
    int total = 0;
    for (int x : v) total += thrower(x);
    return total;
}
}  // namespace ns

int main(int argc, char **) {
    std::vector<int> v{1, 2, argc + 2};
    try {
        return ns::middle(v);
    } catch (const std::exception &e) {
        return static_cast<int>(std::string(e.what()).size());
    }
}
