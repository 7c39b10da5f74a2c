// A C++ function whose mangled name carries an ABI tag (it returns a std::string): gdb prints its frame as
// `name_of[abi:cxx11](int)`, parameters and all, where other C++ frames are named without them.
#include <csignal>
#include <string>

__attribute__((noinline)) std::string name_of(int n) {
    std::raise(SIGTRAP);
    return std::to_string(n);
}

int main() { return static_cast<int>(name_of(7).size()); }
