# expect: parse-error line=2
@staticmethod
def plan():
	walk('kitchen')
